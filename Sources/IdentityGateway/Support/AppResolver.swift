import Foundation
import IdentityKit

/// Resolves a request's app: `X-App-Key` when sent, else the `Host` against the apps' `domains`
/// (docs/client-profiles.md, "How a request finds its app"), with the app's client profile. Cached
/// for a minute (unknown keys and hosts for a few seconds, so a flood of bad keys cannot turn into
/// a flood of queries). The cache belongs to this gateway replica: a changed profile, domain or
/// origin list is seen within a minute; apps are otherwise immutable in what it reads except the
/// token lifetime, which only workers use.
final class AppResolver: Sendable {
    private struct Entry<Value: Sendable>: Sendable {
        let value: Value?
        let expires: Date
    }

    /// An app with its edge settings.
    struct Resolved: Sendable {
        let app: AppRecord
        let profile: ClientProfile
    }

    private let store: AppStore
    private let profiles: ClientProfileStore
    private let byKey = Locked<[String: Entry<Resolved>]>([:])
    private let byHost = Locked<[String: Entry<Resolved>]>([:])
    private let byOrigin = Locked<[String: Entry<OriginPolicy>]>([:])

    init(store: AppStore, profiles: ClientProfileStore) {
        self.store = store
        self.profiles = profiles
    }

    /// What a preflight from this origin may be told.
    struct OriginPolicy: Sendable {
        let allowed: Bool
        let credentials: Bool
    }

    func app(forKey key: String?) throws -> AppRecord {
        try resolve(key: key, host: nil).app
    }

    /// The app of `X-App-Key` when the header is sent (even empty: a wrong key is never
    /// overridden by the host), else of `Host`; 401 `auth/invalid-app-key` when neither names one.
    func app(forKey key: String?, host: String?) throws -> AppRecord {
        try resolve(key: key, host: host).app
    }

    func resolve(key: String?, host: String?) throws -> Resolved {
        if let key {
            guard !key.isEmpty, key.utf8.count <= 128 else { throw ServiceError.invalidAppKey }
            return try cached(key, in: byKey) { try self.store.find(appKey: key) }
        }
        guard let host = host.flatMap(ClientProfile.normalizedHost) else { throw ServiceError.invalidAppKey }
        return try cached(host, in: byHost) {
            try self.profiles.appId(forHost: host).flatMap { try self.store.find(id: $0) }
        }
    }

    func originPolicy(_ origin: String) throws -> OriginPolicy {
        let now = Date()
        if let entry = byOrigin.withLock({ $0[origin] }), entry.expires > now, let policy = entry.value { return policy }
        let found = try profiles.isAllowedByAnyApp(origin: origin)
        let policy = OriginPolicy(allowed: found.allowed, credentials: found.credentials)
        byOrigin.withLock { cache in
            if cache.count > 10_000 { cache.removeAll() }
            cache[origin] = Entry(value: policy, expires: now + (policy.allowed ? 60 : 5))
        }
        return policy
    }

    private func cached(_ name: String, in cache: Locked<[String: Entry<Resolved>]>,
                        find: () throws -> AppRecord?) throws -> Resolved {
        let now = Date()
        if let entry = cache.withLock({ $0[name] }), entry.expires > now {
            guard let resolved = entry.value else { throw ServiceError.invalidAppKey }
            return resolved
        }
        let resolved = try find().map { Resolved(app: $0, profile: try profiles.profile(appId: $0.id)) }
        cache.withLock { cache in
            if cache.count > 10_000 { cache.removeAll() }
            cache[name] = Entry(value: resolved, expires: now + (resolved == nil ? 5 : 60))
        }
        guard let resolved else { throw ServiceError.invalidAppKey }
        return resolved
    }

    /// Apps by id for the public discovery endpoints (JWKS, OpenID configuration).
    func app(id: String) throws -> AppRecord? {
        try store.find(id: id)
    }
}
