import Foundation

/// The opaque session token of the `session-object` and `single-token` profiles (docs/clients.md,
/// "Client profiles": session tokens): `st_` and 256 random bits, one per session, of which only
/// the SHA-256 is stored (`sessions.session_token_hash`). It is the session's credential for as
/// long as the session lives (the app's absolute session lifetime, a year by default) and is
/// checked against the session on every use, so sign-out, deletion and disabling end it at once.
/// Since it is never refreshed, its session also ends once unused for the app's
/// `session_idle_timeout` (30 days by default): the gateway refuses it then and has it ended
/// (`TokenVerifier`).
///
/// It is accepted wherever an access token is (`TokenVerifier`): the gateway's `Authenticator`
/// and, for commands, the workers' `CallerAuthority`, which receive it as the caller token. So
/// the gateway forwards the client's credential as is and needs no signing key; a worker still
/// acts for a user only with that user's own credential.
public enum SessionToken {
    public static let prefix = "st_"

    public static func isSessionToken(_ token: String) -> Bool { token.hasPrefix(prefix) }

    public static func new() -> String { prefix + Base64URL.encode(SecureRandom.bytes(32)) }

    public static func hash(_ token: String) -> [UInt8] { Digest.sha256(token) }
}

/// Finds the live session of a session token. Reads only `sessions`, which the gateway and both
/// acting workers may read. Giving a session its token (the token worker's write of
/// `session_token_hash`) is IdentityCredentials' part (`SessionTokenStore+Issue.swift`).
public struct SessionTokenStore: Sendable {
    package let pool: PGPool

    public init(pool: PGPool) { self.pool = pool }

    /// A live session found by its token.
    public struct Found: Sendable {
        /// Equivalent to an access token of the session (no `exp` of their own: the session's
        /// end is the token's).
        public let claims: AccessTokenClaims
        /// Unseen for longer than the app's `session_idle_timeout` (checked only when reading
        /// the profile, i.e. by the gateway): to be refused and ended.
        public let idle: Bool
        /// Last marked seen over a minute ago: the gateway marks it again (`markSeen`).
        public let seenLongAgo: Bool
    }

    /// The live session of this token in this app, or nil.
    /// `readsProfile` (the gateway, which every request passes): the user's profile is read too,
    /// through the `user_profiles` view: a disabled user's token is refused on the spot, and the
    /// claims say whether the user is a guest (guest upgrades); and the session's idle time is
    /// read against its app's timeout. The workers only compare uid and session, and lack the
    /// view: like an access token's session, a session token's idleness is the gateway's to
    /// check before a command goes out (`CallerAuthority`), which lets the gateway's command that
    /// ends an idle session carry that session's own token. They find the session through
    /// `session_token_session` (migration 0031), which answers for a token they hold without
    /// letting them read any token hash.
    public func find(token: String, app: AppRecord, readsProfile: Bool) throws -> Found? {
        guard token.utf8.count <= 128 else { return nil }
        let sql = readsProfile ? """
            SELECT s.id, s.uid, s.amr, s.aal, extract(epoch FROM s.expires_at)::bigint AS exp,
                   extract(epoch FROM s.created_at)::bigint AS iat, coalesce(p.is_guest, false) AS is_guest,
                   coalesce(p.disabled, false) AS disabled,
                   s.last_seen_at <= now() - make_interval(secs => a.session_idle_timeout) AS idle,
                   s.last_seen_at < now() - interval '60 seconds' AS seen_long_ago
            FROM sessions s JOIN apps a ON a.id = s.app_id
            LEFT JOIN user_profiles p ON p.app_id = s.app_id AND p.uid = s.uid
            WHERE s.app_id = $1 AND s.session_token_hash = $2 AND s.ended_at IS NULL AND s.expires_at > now()
            """ : """
            SELECT s.id, s.uid, s.amr, s.aal, extract(epoch FROM s.expires_at)::bigint AS exp,
                   extract(epoch FROM s.created_at)::bigint AS iat, false AS is_guest, false AS disabled,
                   false AS idle, false AS seen_long_ago
            FROM session_token_session($1, $2) s
            """
        let row = try pool.withConnection { connection in
            try connection.query(sql, [app.id, PGParam.bytea(SessionToken.hash(token))]).first
        }
        guard let row, try !row.bool("disabled") else { return nil }
        let claims = AccessTokenClaims(iss: app.issuer, aud: app.id, sub: try row.string("uid"), sid: try row.string("id"),
                                       iat: try row.int64("iat"), exp: try row.int64("exp"), jti: "session-token",
                                       amr: try row.stringArray("amr"), aal: try row.int("aal"), isGuest: try row.bool("is_guest"),
                                       email: nil, emailVerified: false, roles: [])
        return Found(claims: claims, idle: try row.bool("idle"), seenLongAgo: try row.bool("seen_long_ago"))
    }

    /// Marks the session seen now (the gateway, through `session_token_seen`, which writes only
    /// when the last mark is over a minute old and never revives an idle or ended session).
    public func markSeen(appId: String, sessionId: String) throws {
        try pool.withConnection { connection in
            _ = try connection.query("SELECT session_token_seen($1, $2)", [appId, sessionId])
        }
    }

    /// The app's profile gives its clients session tokens (`session-object`, `single-token`).
    public func profileHasSessionTokens(appId: String, on connection: PGConnection) throws -> Bool {
        try !connection.query("""
            SELECT 1 FROM app_client_profiles WHERE app_id = $1 AND profile IN ('session-object', 'single-token')
            """, [appId]).isEmpty
    }
}
