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
///
/// A replica reads its own writes: the answer of every command it relays waits until this
/// replica has heard every change committed before the answer came (`afterCommitted`), so a
/// sign-out, a disable or a profile change is seen by the very next request here. Only the
/// success of a command that only adds sessions (a sign-in, a refresh: `CommandSender`) goes at
/// once: nothing held changed, and a session not held is read from the store.
final class SessionReads: Sendable {
    enum Held: Sendable {
        case session(uid: String, expiresAt: Int64)
        case user(HeldUser)
    }

    /// A user as held, with its `GET /v1/me` answer rendered at the first ask and kept with it:
    /// the answer says only what the profile says, so it lives and dies with the entry (a change
    /// to the user forgets both). Rendering was an eighth of the gateway's CPU per `/v1/me`.
    final class HeldUser: Sendable {
        let profile: UserProfile
        private let rendered = Locked<HTTPResponse?>(nil)

        init(_ profile: UserProfile) { self.profile = profile }

        /// `GET /v1/me`'s answer: `{"data": <the user>}`.
        var meResponse: HTTPResponse {
            if let response = rendered.withLock({ $0 }) { return response }
            let response = HTTPResponse.data(UserJSON.make(profile.message))
            rendered.withLock { $0 = response }
            return response
        }
    }

    /// Entries held at most (a session and a user each take one).
    static let capacity = 200_000
    /// Seconds an entry is served before it is read again, whatever was heard.
    static let maximumAge = 30.0
    /// How long a command's answer waits for this replica to hear its own marker; past that,
    /// everything held is forgotten and the answer goes.
    static let catchUpTimeout = 1.0

    let cache: ReadCache<Held>
    private let users: UserProfileStore
    private let listener: ChangeListener?
    private let pool: PGPool?
    /// Answers waiting for their marker to come back, by marker.
    private let waiting = Locked<[String: @Sendable () -> Void]>([:])

    /// Without `databaseURL`, nothing is listened to and every read goes to the store.
    /// `pool`: where the markers are sent (the pool of `users`).
    init(users: UserProfileStore, pool: PGPool?, databaseURL: String?, capacity: Int = SessionReads.capacity,
         maximumAge: Double = SessionReads.maximumAge) {
        let cache = ReadCache<Held>(capacity: capacity, maximumAge: maximumAge)
        self.cache = cache
        self.users = users
        self.pool = pool
        let waiting = self.waiting
        listener = databaseURL.map { url in
            ChangeListener(url: url, channel: SessionChange.channel,
                           received: { payload in
                               let change = SessionChange.parse(payload)
                               if case .sync(let marker)? = change {
                                   if let answer = waiting.withLock({ $0.removeValue(forKey: marker) }) {
                                       DispatchQueue.global().async(execute: answer)
                                   }
                               } else {
                                   Self.forget(change, in: cache)
                               }
                           },
                           listening: {
                               cache.startUsing()
                               ServiceMetrics.sessionListenerConnected.set(1)
                           },
                           lost: {
                               cache.stopUsing()
                               ServiceMetrics.sessionListenerConnected.set(0)
                               // Nothing is served from memory now: what waited may go.
                               for answer in waiting.withLock({ held in defer { held.removeAll() }; return Array(held.values) }) { DispatchQueue.global().async(execute: answer) }
                           })
        }
        ServiceMetrics.sessionListenerConnected.set(0)
    }

    func start() { listener?.start() }

    /// Calls `then` once this replica has heard every change committed before now: at once while
    /// nothing is served from memory; otherwise when a marker notified now comes back (a worker's
    /// commit, made before its reply, comes before the marker's).
    func afterCommitted(_ then: @escaping @Sendable () -> Void) {
        guard let pool, listener != nil, cache.isUsable else { return then() }
        let marker = Identifiers.prefixed("sync")
        waiting.withLock { $0[marker] = then }
        DispatchQueue.global().async {
            do {
                _ = try pool.withConnection { connection in
                    try connection.query("SELECT pg_notify($1, $2)", [SessionChange.channel, SessionChange.syncPayload(marker)])
                }
            } catch {
                self.giveUp(marker)
            }
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + Self.catchUpTimeout) { self.giveUp(marker) }
    }

    /// A marker not heard back in time (or not sent): forget everything held, then answer.
    private func giveUp(_ marker: String) {
        guard let answer = waiting.withLock({ $0.removeValue(forKey: marker) }) else { return }
        Log.warning("store changes not heard in time; forgetting every session held", ["marker": marker])
        cache.forgetAll()
        answer()
    }

    func stop() { listener?.stop() }

    /// The user behind a token and its session's expiry (Unix seconds), while that session of
    /// that user lives (not ended); nil otherwise.
    func liveSession(appId: String, uid: String, sessionId: String) throws -> (user: HeldUser, sessionExpiresAt: Int64)? {
        let sessionKey = Self.sessionKey(appId: appId, sessionId: sessionId)
        let userKey = Self.userKey(appId: appId, uid: uid)
        // A held expiry that has passed is read again rather than believed: a refresh moves the
        // stored expiry later without a notification (migration 0042), never earlier.
        if let (session, user) = cache.values(sessionKey, userKey, now: Self.now()),
           case .session(let owner, let expiresAt) = session, owner == uid, case .user(let held) = user,
           expiresAt > Timestamp.nowSeconds() {
            ServiceMetrics.sessionCache.inc("hit")
            return (held, expiresAt)
        }
        // Taken before the read: a change heard while it runs keeps its answer out of the cache.
        let ticket = cache.ticket(sessionKey, userKey)
        ServiceMetrics.sessionCache.inc(ticket == nil ? "bypass" : "miss")
        guard let found = try users.findWithLiveSession(appId: appId, uid: uid, sessionId: sessionId) else { return nil }
        let held = HeldUser(found.profile)
        if let ticket {
            cache.store([(sessionKey, .session(uid: uid, expiresAt: found.sessionExpiresAt)), (userKey, .user(held))],
                        ticket: ticket, now: Self.now())
        }
        return (held, found.sessionExpiresAt)
    }

    /// Forgets what a change names; a payload we cannot read forgets everything.
    static func forget(_ change: SessionChange?, in cache: ReadCache<Held>) {
        switch change {
        case .session(let appId, let sessionId)?: cache.invalidate(sessionKey(appId: appId, sessionId: sessionId))
        case .user(let appId, let uid)?: cache.invalidate(userKey(appId: appId, uid: uid))
        case .sync?: break  // answered by the listener's caller
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
