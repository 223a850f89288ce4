/// The gateway's reads of users, through the `user_profiles` view (no secret column; see
/// `UserProfile`). Every statement is scoped by `app_id`.
public struct UserProfileStore: Sendable {
    let pool: PGPool

    public init(pool: PGPool) { self.pool = pool }

    /// The user behind an access token, only while the token's session lives: one query serves
    /// `GET /v1/me` and refuses tokens of ended sessions before their `exp`.
    public func find(appId: String, uid: String, liveSessionId sessionId: String) throws -> UserProfile? {
        try pool.withConnection { connection in
            try connection.query("""
                SELECT \(UserProfile.columns) FROM user_profiles
                WHERE app_id = $1 AND uid = $2 AND EXISTS (
                    SELECT 1 FROM sessions s
                    WHERE s.app_id = $1 AND s.id = $3 AND s.uid = $2 AND s.ended_at IS NULL)
                """, [appId, uid, sessionId]).first.map(UserProfile.init(row:))
        }
    }
}
