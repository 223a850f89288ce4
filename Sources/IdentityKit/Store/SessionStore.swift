/// Sessions and their refresh tokens (hashes only).
public struct SessionStore: Sendable {
    let pool: PGPool

    public init(pool: PGPool) { self.pool = pool }

    /// True while the session exists for this user and has not ended: access tokens of an
    /// ended session are refused from that moment, not only at `exp`.
    public func isLive(appId: String, sessionId: String, uid: String) throws -> Bool {
        try pool.withConnection { connection in
            try !connection.query("""
                SELECT 1 FROM sessions WHERE app_id = $1 AND id = $2 AND uid = $3 AND ended_at IS NULL
                """, [appId, sessionId, uid]).isEmpty
        }
    }

    /// Creates a session with its first refresh token inside the caller's transaction.
    public func create(appId: String, uid: String, sessionId: String, amr: [String], ip: String, userAgent: String,
                       refreshTokenHash: [UInt8], refreshLifetimeSeconds: Int, on connection: PGConnection) throws {
        try connection.query("""
            INSERT INTO sessions (app_id, id, uid, amr, ip, user_agent, expires_at)
            VALUES ($1, $2, $3, $4, $5, $6, now() + make_interval(secs => $7))
            """, [appId, sessionId, uid, PGParam.textArray(amr), ip.isEmpty ? nil : ip,
                  userAgent.isEmpty ? nil : String(userAgent.prefix(512)), String(refreshLifetimeSeconds)])
        try connection.query("""
            INSERT INTO refresh_tokens (app_id, token_hash, session_id, expires_at)
            VALUES ($1, $2, $3, now() + make_interval(secs => $4))
            """, [appId, PGParam.bytea(refreshTokenHash), sessionId, String(refreshLifetimeSeconds)])
    }
}
