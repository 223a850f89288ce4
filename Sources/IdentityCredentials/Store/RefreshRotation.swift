import IdentityKit

/// Refresh-token rotation in one statement, sent outside any transaction: one round trip to
/// PostgreSQL where the lock, three writes, the commit and the user read took seven.
///
/// The statement locks the presented token's row and its session's (`FOR UPDATE`, as
/// `lockRefreshToken`), and only when the token is live (unspent, unexpired, its session live
/// and within its absolute lifetime) spends it, inserts its successor and extends the session,
/// then returns the token's state and its user. Parallel refreshes of one token queue on the
/// token's lock; the waiting statement re-reads the row once the first commits and sees it
/// spent. The session's lock is the one sign-out's `UPDATE sessions` takes: a refresh that
/// comes second re-reads the session and sees it ended, so no refresh that commits after a
/// sign-out extends the session or answers with a pair (the session row alone would be read
/// from the statement's snapshot, from before the sign-out committed). What this
/// statement does not decide (a session past its lifetime, a spent token outside the grace)
/// is left to the transactional path, which ends the session (`rotated` false).
public struct RefreshRotation: Sendable {
    public let state: SessionStore.RefreshTokenState
    /// True when this call spent the token and stored `successorHash`.
    public let rotated: Bool
    /// The session's user, read in the same statement (nil if the row is gone).
    public let user: UserRecord?
}

extension SessionStore {
    public func rotateIfLive(appId: String, presentedHash: [UInt8], successorHash: [UInt8], graceSeconds: Int,
                             lifetimeSeconds: Int, ip: String, userAgent: String) throws -> RefreshRotation? {
        try pool.withConnection { connection in
            try connection.query("""
                WITH token AS (
                    SELECT rt.session_id, s.uid AS session_uid, s.amr, s.aal, rt.spent_at IS NOT NULL AS spent,
                           rt.spent_at IS NOT NULL AND rt.spent_at >= now() - make_interval(secs => $5) AS within_grace,
                           rt.expires_at <= now() AS expired, s.ended_at IS NOT NULL AS ended,
                           rt.successor_hash,
                           s.created_at <= now() - make_interval(secs => a.session_lifetime) AS past_lifetime,
                           s.created_at + make_interval(secs => a.session_lifetime) AS lifetime_end
                    FROM refresh_tokens rt JOIN sessions s ON s.app_id = rt.app_id AND s.id = rt.session_id
                    JOIN apps a ON a.id = rt.app_id
                    WHERE rt.app_id = $1 AND rt.token_hash = $2
                    FOR UPDATE OF rt, s
                ), live AS (
                    SELECT * FROM token WHERE NOT spent AND NOT expired AND NOT ended AND NOT past_lifetime
                ), spend AS (
                    UPDATE refresh_tokens rt SET spent_at = now(), successor_hash = $3
                    FROM live WHERE rt.app_id = $1 AND rt.token_hash = $2
                    RETURNING rt.session_id
                ), successor AS (
                    INSERT INTO refresh_tokens (app_id, token_hash, session_id, expires_at)
                    SELECT $1, $3, session_id, now() + make_interval(secs => $4) FROM spend
                    RETURNING 1
                ), extended AS (  -- Data-modifying CTEs run whether or not the SELECT reads them.
                    UPDATE sessions s SET last_seen_at = now(),
                           expires_at = LEAST(now() + make_interval(secs => $4), live.lifetime_end),
                           ip = COALESCE($6, s.ip), user_agent = COALESCE($7, s.user_agent)
                    FROM live WHERE s.app_id = $1 AND s.id = live.session_id
                    RETURNING 1
                )
                SELECT token.session_id, token.session_uid, token.amr, token.aal, token.spent, token.within_grace,
                       token.expired, token.ended, token.successor_hash, token.past_lifetime,
                       (SELECT count(*) FROM spend) AS rotated,
                       users.app_id IS NOT NULL AS has_user, \(UserRecord.columns)
                FROM token LEFT JOIN users ON users.app_id = $1 AND users.uid = token.session_uid
                """, [appId, PGParam.bytea(presentedHash), PGParam.bytea(successorHash), String(lifetimeSeconds),
                      String(graceSeconds), ip.isEmpty ? nil : ip,
                      userAgent.isEmpty ? nil : String(userAgent.prefix(512))]).first.map { row in
                let state = try RefreshTokenState(
                    sessionId: row.string("session_id"), uid: row.string("session_uid"), amr: row.stringArray("amr"),
                    aal: row.int("aal"), spent: row.bool("spent"), withinGrace: row.bool("within_grace"), expired: row.bool("expired"),
                    sessionEnded: row.bool("ended"), successorHash: row.optionalBytes("successor_hash") ?? [],
                    pastLifetime: row.bool("past_lifetime"),
                    userDisabled: row.bool("has_user") ? row.bool("disabled") : false)
                return try RefreshRotation(state: state, rotated: row.int("rotated") > 0,
                                           user: row.bool("has_user") ? UserRecord(row: row) : nil)
            }
        }
    }
}
