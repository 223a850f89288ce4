import Foundation
import IdentityKit
import Synchronization

/// Verifies access tokens with the app's public keys, cached per app for a minute and
/// reloaded at once (at most every 5 seconds) when a token names a key not yet seen, so a
/// rotated key is accepted without waiting for the cache to expire.
final class TokenVerifier: Sendable {
    private struct Keys: Sendable {
        let byKid: [String: RSAKey]
        let loaded: Date
    }

    private let store: AppStore
    private let cache = Mutex<[String: Keys]>([:])

    init(store: AppStore) { self.store = store }

    /// The claims of a valid bearer token for `app`, or the error to answer with.
    func verify(authorization: String?, app: AppRecord) throws -> AccessTokenClaims {
        guard let authorization, authorization.hasPrefix("Bearer ") else { throw ServiceError.invalidToken }
        let token = String(authorization.dropFirst(7)).trimmingCharacters(in: .whitespaces)
        guard !token.isEmpty, token.utf8.count < 8192 else { throw ServiceError.invalidToken }
        let keys = try keys(appId: app.id)
        do {
            return try JWT.verify(token, issuer: app.issuer, audience: app.id, now: Timestamp.nowSeconds()) { kid in
                keys.byKid[kid] ?? (try? self.reload(appId: app.id, ifOlderThan: 5))?.byKid[kid]
            }
        } catch .expired {
            throw ServiceError.tokenExpired
        } catch {
            throw ServiceError.invalidToken
        }
    }

    private func keys(appId: String) throws -> Keys {
        if let cached = cache.withLock({ $0[appId] }), Date().timeIntervalSince(cached.loaded) < 60 {
            return cached
        }
        return try reload(appId: appId, ifOlderThan: 0)
    }

    private func reload(appId: String, ifOlderThan age: TimeInterval) throws -> Keys {
        if let cached = cache.withLock({ $0[appId] }), Date().timeIntervalSince(cached.loaded) < age {
            return cached
        }
        var byKid: [String: RSAKey] = [:]
        for key in try store.publicKeys(appId: appId) {
            byKid[key.kid] = try RSAKey.fromPEM(key.publicPEM)
        }
        let keys = Keys(byKid: byKid, loaded: Date())
        cache.withLock { $0[appId] = keys }
        return keys
    }
}
