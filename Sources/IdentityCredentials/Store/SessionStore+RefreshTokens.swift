import IdentityKit

/// The refresh-token side of `SessionStore` (the token worker's): a session's first refresh
/// token and its rotations, which write and compare `refresh_tokens.token_hash` and read
/// `successor_hash`. Apart from the session reads the gateway makes (IdentityKit's
/// `SessionStore`), so the gateway links no code that touches a refresh-token hash.
extension SessionStore {
    /// Creates a session with its first refresh token inside the caller's transaction; the
    /// command that started it is kept as a hash with the app (`startedBy` finds it so).
    public func create(appId: String, uid: String, sessionId: String, amr: [String], aal: Int, ip: String, userAgent: String,
                       refreshTokenHash: [UInt8], refreshLifetimeSeconds: Int, commandId: String?, createdAccount: Bool,
                       on connection: PGConnection) throws {
        try connection.query("""
            INSERT INTO sessions (app_id, id, uid, amr, ip, user_agent, expires_at, command_key, created_account, aal)
            VALUES ($1, $2, $3, $4, $5, $6, now() + make_interval(secs => $7), sha256(convert_to($1 || ':' || $8, 'UTF8')),
                    $9, $10)
            """, [appId, sessionId, uid, PGParam.textArray(amr), ip.isEmpty ? nil : ip,
                  userAgent.isEmpty ? nil : String(userAgent.prefix(512)), String(refreshLifetimeSeconds), commandId,
                  PGParam.bool(createdAccount), String(aal)])
        try connection.query("""
            INSERT INTO refresh_tokens (app_id, token_hash, session_id, expires_at)
            VALUES ($1, $2, $3, now() + make_interval(secs => $4))
            """, [appId, PGParam.bytea(refreshTokenHash), sessionId, String(refreshLifetimeSeconds)])
    }

    /// A refresh token as rotation sees it, read under a row lock.
    public struct RefreshTokenState: Sendable {
        public let sessionId: String
        public let uid: String
        public let amr: [String]
        public let aal: Int
        public let spent: Bool
        /// Spent at most `grace` seconds ago.
        public let withinGrace: Bool
        public let expired: Bool
        public let sessionEnded: Bool
        public let successorHash: [UInt8]
        /// The session began longer ago than the app's absolute session lifetime.
        public let pastLifetime: Bool
        /// The user is disabled (admin API): its refreshes answer 403 `auth/user-disabled`.
        public let userDisabled: Bool
    }

    /// Locks the token's row and its session's until the transaction ends (`FOR UPDATE`):
    /// parallel refreshes of one token queue here, so the database, not a read-then-write in
    /// code, decides which one rotates and the others see it spent; and a sign-out (`end`, which
    /// updates the session row) either waits for this transaction or has ended the session
    /// before this reads it, never in between.
    public func lockRefreshToken(appId: String, hash: [UInt8], graceSeconds: Int,
                                 on connection: PGConnection) throws -> RefreshTokenState? {
        try connection.query("""
            SELECT rt.session_id, s.uid, s.amr, s.aal, rt.spent_at IS NOT NULL AS spent,
                   rt.spent_at IS NOT NULL AND rt.spent_at >= now() - make_interval(secs => $3) AS within_grace,
                   rt.expires_at <= now() AS expired, s.ended_at IS NOT NULL AS ended, rt.successor_hash,
                   s.created_at <= now() - make_interval(secs => a.session_lifetime) AS past_lifetime,
                   EXISTS (SELECT 1 FROM users u WHERE u.app_id = rt.app_id AND u.uid = s.uid AND u.disabled) AS user_disabled
            FROM refresh_tokens rt JOIN sessions s ON s.app_id = rt.app_id AND s.id = rt.session_id
            JOIN apps a ON a.id = rt.app_id
            WHERE rt.app_id = $1 AND rt.token_hash = $2
            FOR UPDATE OF rt, s
            """, [appId, PGParam.bytea(hash), String(graceSeconds)]).first.map { row in
            try RefreshTokenState(sessionId: row.string("session_id"), uid: row.string("uid"), amr: row.stringArray("amr"),
                              aal: row.int("aal"), spent: row.bool("spent"), withinGrace: row.bool("within_grace"),
                              expired: row.bool("expired"), sessionEnded: row.bool("ended"),
                              successorHash: row.optionalBytes("successor_hash") ?? [],
                              pastLifetime: row.bool("past_lifetime"), userDisabled: row.bool("user_disabled"))
        }
    }

    /// Spends a token and stores its successor, extending the session's life (never past its
    /// absolute lifetime).
    public func rotate(appId: String, sessionId: String, spentHash: [UInt8], successorHash: [UInt8],
                       lifetimeSeconds: Int, ip: String, userAgent: String, on connection: PGConnection) throws {
        try connection.query("""
            UPDATE refresh_tokens SET spent_at = now(), successor_hash = $3 WHERE app_id = $1 AND token_hash = $2
            """, [appId, PGParam.bytea(spentHash), PGParam.bytea(successorHash)])
        try connection.query("""
            INSERT INTO refresh_tokens (app_id, token_hash, session_id, expires_at)
            VALUES ($1, $2, $3, now() + make_interval(secs => $4))
            """, [appId, PGParam.bytea(successorHash), sessionId, String(lifetimeSeconds)])
        try connection.query("""
            UPDATE sessions SET last_seen_at = now(),
                   expires_at = LEAST(now() + make_interval(secs => $3),
                                      created_at + make_interval(secs => (SELECT session_lifetime FROM apps WHERE id = $1))),
                   ip = COALESCE($4, ip), user_agent = COALESCE($5, user_agent)
            WHERE app_id = $1 AND id = $2
            """, [appId, sessionId, String(lifetimeSeconds), ip.isEmpty ? nil : ip,
                  userAgent.isEmpty ? nil : String(userAgent.prefix(512))])
    }
}
