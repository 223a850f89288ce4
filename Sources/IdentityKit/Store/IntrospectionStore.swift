/// What introspection (RFC 7662) asks the store, for the gateway, which may read neither
/// refresh-token hashes nor users: `refresh_token_introspect` (migration 0012) answers for a
/// refresh token (an access token's session is read through `UserProfileStore.findWithLiveSession`).
public struct IntrospectionStore: Sendable {
    let pool: PGPool

    public init(pool: PGPool) { self.pool = pool }

    public struct RefreshToken: Sendable {
        public let sessionId: String
        public let uid: String
        public let amr: [String]
        /// The session's assurance level, which each access token it refreshes to carries.
        public let aal: Int
        public let issuedAt: Int64
        public let expiresAt: Int64
    }

    /// A refresh token of this app that would refresh now: unspent, unexpired, its session live
    /// and its user enabled. Anything else: nil.
    public func refreshToken(appId: String, token: String) throws -> RefreshToken? {
        try pool.withConnection { connection in
            try connection.query("""
                SELECT r.session_id, r.uid, r.amr, extract(epoch FROM r.issued_at)::bigint AS iat,
                       extract(epoch FROM r.expires_at)::bigint AS exp,
                       coalesce((SELECT s.aal FROM sessions s WHERE s.app_id = $1 AND s.id = r.session_id), 1)::integer AS aal
                FROM refresh_token_introspect($1, $2) r
                """, [appId, PGParam.bytea(Digest.sha256(token))]).first.map { row in
                try RefreshToken(sessionId: row.string("session_id"), uid: row.string("uid"), amr: row.stringArray("amr"),
                                 aal: row.int("aal"), issuedAt: row.int64("iat"), expiresAt: row.int64("exp"))
            }
        }
    }
}
