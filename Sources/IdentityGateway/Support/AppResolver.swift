import Foundation
import IdentityKit

/// Resolves a request's app: `X-App-Key` when sent, else the `Host` against the apps' `domains`
/// (docs/client-profiles.md, "How a request finds its app"), with the app's client profile. Cached
/// for a minute (unknown keys and hosts for a few seconds, so a flood of bad keys cannot turn into
/// a flood of queries), and forgotten whenever the store announces a change of the tables it
/// reads (`identity_app_changes`, migration 0047): a changed profile, prefix, domain or origin
/// list applies on every replica at once. While this replica is not listening (start-up, a lost
/// connection), nothing is held longer than a second.
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

    /// The store's announcements reach this replica (`ChangeListener`): entries may be kept.
    private let listening = Locked(false)

    init(store: AppStore, profiles: ClientProfileStore) {
        self.store = store
        self.profiles = profiles
    }

    /// The channel of the store's announcements (migration 0047).
    static let changes = "identity_app_changes"

    /// Bumped by every `forgetAll`: a read that began before a change is not kept after it
    /// (it may hold what the change replaced).
    private let generation = Locked(0)

    /// An app's settings changed somewhere: every app is read from the store again.
    func forgetAll() {
        generation.withLock { $0 += 1 }
        byKey.withLock { $0.removeAll() }
        byHost.withLock { $0.removeAll() }
        byOrigin.withLock { $0.removeAll() }
    }

    /// Whether announcements arrive; either way, what is held is forgotten (some may have been missed).
    func setListening(_ now: Bool) {
        listening.withLock { $0 = now }
        forgetAll()
    }

    /// How long an entry is kept: `seconds` while announcements arrive, else a second.
    private func keep(_ seconds: Double) -> Double { listening.withLock { $0 } ? seconds : min(seconds, 1) }

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
        let began = generation.withLock { $0 }
        let found = try profiles.isAllowedByAnyApp(origin: origin)
        let policy = OriginPolicy(allowed: found.allowed, credentials: found.credentials)
        byOrigin.withLock { cache in
            guard began == generation.withLock({ $0 }) else { return }
            if cache.count > 10_000 { cache.removeAll() }
            cache[origin] = Entry(value: policy, expires: now + keep(policy.allowed ? 60 : 5))
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
        let began = generation.withLock { $0 }
        let resolved = try find().map { Resolved(app: $0, profile: try profiles.profile(appId: $0.id)) }
        cache.withLock { cache in
            guard began == generation.withLock({ $0 }) else { return }
            if cache.count > 10_000 { cache.removeAll() }
            cache[name] = Entry(value: resolved, expires: now + keep(resolved == nil ? 5 : 60))
        }
        guard let resolved else { throw ServiceError.invalidAppKey }
        return resolved
    }

    /// Apps by id for the public discovery endpoints (JWKS, OpenID configuration).
    func app(id: String) throws -> AppRecord? {
        try store.find(id: id)
    }
}
