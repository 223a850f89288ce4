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

    /// The user behind an access token with its live session's expiry (Unix seconds), in one
    /// query: what the gateway keeps in memory for GET /v1/me and introspection.
    public func findWithLiveSession(appId: String, uid: String, sessionId: String) throws
        -> (profile: UserProfile, sessionExpiresAt: Int64)? {
        try pool.withConnection { connection in
            guard let row = try connection.query("""
                SELECT \(UserProfile.columns),
                       (SELECT extract(epoch FROM s.expires_at)::bigint FROM sessions s
                        WHERE s.app_id = $1 AND s.id = $3 AND s.uid = $2 AND s.ended_at IS NULL) AS session_expires_at
                FROM user_profiles WHERE app_id = $1 AND uid = $2
                """, [appId, uid, sessionId]).first,
                  let expires = try row.optionalString("session_expires_at").flatMap({ Int64($0) }) else { return nil }
            return (try UserProfile(row: row), expires)
        }
    }

    /// A user of the app, whatever its sessions (the admin API).
    public func find(appId: String, uid: String) throws -> UserProfile? {
        try pool.withConnection { connection in
            try connection.query("SELECT \(UserProfile.columns) FROM user_profiles WHERE app_id = $1 AND uid = $2",
                                 [appId, uid]).first.map(UserProfile.init(row:))
        }
    }

    /// Filters of the admin user list; every one optional. Prefixes compare case-insensitively.
    public struct Filter: Sendable {
        public var emailPrefix: String?
        public var phonePrefix: String?
        public var usernamePrefix: String?
        /// `password`, `apple`, `google` or `firebase`.
        public var provider: String?
        /// RFC 3339 bounds on `created_at` (validated by the caller): [after, before).
        public var createdAfter: String?
        public var createdBefore: String?
        public var disabled: Bool?
        public var guest: Bool?
        /// The cursor: users with a uid below this one (uids are ULIDs: newest first).
        public var beforeUid: String?
        /// The page just newer than this uid (a page back), still answered newest first.
        public var afterUid: String?
        public var limit: Int

        public init(limit: Int = 50) { self.limit = limit }
    }

    /// The app's users newest first, `filter.limit` at most: those older than `beforeUid`, or the
    /// nearest ones newer than `afterUid` (uids are ULIDs: their order is the order made).
    public func list(appId: String, _ filter: Filter) throws -> [UserProfile] {
        let back = filter.afterUid != nil
        let found = try pool.withConnection { connection in
            try connection.query("""
                SELECT \(UserProfile.columns) FROM user_profiles
                WHERE app_id = $1 AND ($2::text IS NULL OR uid < $2) AND ($12::text IS NULL OR uid > $12)
                  AND ($3::text IS NULL OR starts_with(lower(email), lower($3)))
                  AND ($4::text IS NULL OR starts_with(phone, $4))
                  AND ($5::text IS NULL OR starts_with(lower(username), lower($5)))
                  AND ($6::text IS NULL OR ($6 = 'password' AND has_password) OR $6 = ANY (identity_providers))
                  AND ($7::timestamptz IS NULL OR created_at >= $7::timestamptz)
                  AND ($8::timestamptz IS NULL OR created_at < $8::timestamptz)
                  AND ($9::boolean IS NULL OR disabled = $9::boolean)
                  AND ($10::boolean IS NULL OR is_guest = $10::boolean)
                ORDER BY uid \(back ? "ASC" : "DESC") LIMIT $11
                """, [appId, filter.beforeUid, filter.emailPrefix, filter.phonePrefix, filter.usernamePrefix, filter.provider,
                      filter.createdAfter, filter.createdBefore, filter.disabled.map(PGParam.bool),
                      filter.guest.map(PGParam.bool), String(filter.limit), filter.afterUid]).map(UserProfile.init(row:))
        }
        return back ? found.reversed() : found
    }
}
