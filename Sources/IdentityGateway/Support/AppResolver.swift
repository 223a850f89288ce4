import Foundation
import IdentityKit

/// Resolves `X-App-Key` to its app, cached for a minute (unknown keys for a few seconds, so a
/// flood of bad keys cannot turn into a flood of queries). The cache belongs to this gateway
/// replica; apps are immutable in what it reads except the token lifetime, which only workers use.
final class AppResolver: Sendable {
    private struct Entry: Sendable {
        let app: AppRecord?
        let expires: Date
    }

    private let store: AppStore
    private let cache = Locked<[String: Entry]>([:])

    init(store: AppStore) { self.store = store }

    func app(forKey key: String?) throws -> AppRecord {
        guard let key, !key.isEmpty, key.utf8.count <= 128 else { throw ServiceError.invalidAppKey }
        let now = Date()
        if let entry = cache.withLock({ $0[key] }), entry.expires > now {
            guard let app = entry.app else { throw ServiceError.invalidAppKey }
            return app
        }
        let app = try store.find(appKey: key)
        cache.withLock { cache in
            if cache.count > 10_000 { cache.removeAll() }
            cache[key] = Entry(app: app, expires: now + (app == nil ? 5 : 60))
        }
        guard let app else { throw ServiceError.invalidAppKey }
        return app
    }

    /// Apps by id for the public discovery endpoints (JWKS, OpenID configuration).
    func app(id: String) throws -> AppRecord? {
        try store.find(id: id)
    }
}
