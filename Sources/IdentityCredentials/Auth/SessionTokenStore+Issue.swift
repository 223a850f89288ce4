import IdentityKit

/// The token worker's write of a session token's hash (`sessions.session_token_hash`).
extension SessionTokenStore {
    /// Gives a live session its token (once: a session that has one keeps it) and makes the
    /// session last the app's absolute lifetime, since this token is never refreshed. In the
    /// caller's transaction; false when there is no such live session or it already has a token.
    public func issue(appId: String, sessionId: String, uid: String, hash: [UInt8], on connection: PGConnection) throws -> Bool {
        try !connection.query("""
            UPDATE sessions SET session_token_hash = $4,
                   expires_at = created_at + make_interval(secs => (SELECT session_lifetime FROM apps WHERE id = $1))
            WHERE app_id = $1 AND id = $2 AND uid = $3 AND ended_at IS NULL AND session_token_hash IS NULL
            RETURNING 1
            """, [appId, sessionId, uid, PGParam.bytea(hash)]).isEmpty
    }
}
