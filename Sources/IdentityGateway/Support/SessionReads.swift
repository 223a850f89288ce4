import Foundation
import IdentityKit

/// What GET /v1/me and introspection read of an access token's session and user, served from
/// memory on this replica while it hears every change to them, from the store otherwise.
///
/// The store announces each change that ends a session or changes a user's answer, at commit,
/// by triggers (migration 0038); this replica's `ChangeListener` forgets the entry it names. While
/// the listener is not connected (start-up, a lost connection), every read goes to the store, and
/// after it reconnects the cache starts from empty. No entry is served after `maximumAge` seconds,
/// so even a connection lost without a word cannot keep a dead session alive longer than that.
final class SessionReads: Sendable {
    enum Held: Sendable {
        case session(uid: String, expiresAt: Int64)
        case profile(UserProfile)
    }

    /// Entries held at most (a session and a user each take one).
    static let capacity = 200_000
    /// Seconds an entry is served before it is read again, whatever was heard.
    static let maximumAge = 30.0

    let cache: ReadCache<Held>
    private let users: UserProfileStore
    private let listener: ChangeListener?

    /// Without `databaseURL`, nothing is listened to and every read goes to the store.
    init(users: UserProfileStore, databaseURL: String?, capacity: Int = SessionReads.capacity,
         maximumAge: Double = SessionReads.maximumAge) {
        let cache = ReadCache<Held>(capacity: capacity, maximumAge: maximumAge)
        self.cache = cache
        self.users = users
        listener = databaseURL.map { url in
            ChangeListener(url: url, channel: SessionChange.channel,
                           received: { Self.forget(SessionChange.parse($0), in: cache) },
                           listening: {
                               cache.startUsing()
                               ServiceMetrics.sessionListenerConnected.set(1)
                           },
                           lost: {
                               cache.stopUsing()
                               ServiceMetrics.sessionListenerConnected.set(0)
                           })
        }
        ServiceMetrics.sessionListenerConnected.set(0)
    }

    func start() { listener?.start() }
    func stop() { listener?.stop() }

    /// The user behind a token and its session's expiry (Unix seconds), while that session of
    /// that user lives (not ended); nil otherwise.
    func liveSession(appId: String, uid: String, sessionId: String) throws -> (profile: UserProfile, sessionExpiresAt: Int64)? {
        let sessionKey = Self.sessionKey(appId: appId, sessionId: sessionId)
        let userKey = Self.userKey(appId: appId, uid: uid)
        if let (session, user) = cache.values(sessionKey, userKey, now: Self.now()),
           case .session(let owner, let expiresAt) = session, owner == uid, case .profile(let profile) = user {
            ServiceMetrics.sessionCache.inc("hit")
            return (profile, expiresAt)
        }
        // Taken before the read: a change heard while it runs keeps its answer out of the cache.
        let ticket = cache.ticket(sessionKey, userKey)
        ServiceMetrics.sessionCache.inc(ticket == nil ? "bypass" : "miss")
        guard let found = try users.findWithLiveSession(appId: appId, uid: uid, sessionId: sessionId) else { return nil }
        if let ticket {
            cache.store([(sessionKey, .session(uid: uid, expiresAt: found.sessionExpiresAt)), (userKey, .profile(found.profile))],
                        ticket: ticket, now: Self.now())
        }
        return found
    }

    /// Forgets what a change names; a payload we cannot read forgets everything.
    static func forget(_ change: SessionChange?, in cache: ReadCache<Held>) {
        switch change {
        case .session(let appId, let sessionId)?: cache.invalidate(sessionKey(appId: appId, sessionId: sessionId))
        case .user(let appId, let uid)?: cache.invalidate(userKey(appId: appId, uid: uid))
        case nil:
            Log.warning("unreadable store change; forgetting every session held", [:])
            cache.startUsing()
        }
    }

    static func sessionKey(appId: String, sessionId: String) -> String { "s\u{1F}" + appId + "\u{1F}" + sessionId }
    static func userKey(appId: String, uid: String) -> String { "u\u{1F}" + appId + "\u{1F}" + uid }

    /// Monotonic seconds: an entry's age is not fooled by a wall-clock step.
    private static func now() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }
}
