import Foundation

/// The opaque session token of the `session-object` and `single-token` profiles
/// (COMPATIBILITY.md): `st_` and 256 random bits, one per session, of which only the SHA-256 is
/// stored (`sessions.session_token_hash`). It is the session's credential for as long as the
/// session lives (the app's absolute session lifetime, a year by default) and is checked against
/// the session on every use, so sign-out, deletion and disabling end it at once.
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
/// acting workers may read.
public struct SessionTokenStore: Sendable {
    let pool: PGPool

    public init(pool: PGPool) { self.pool = pool }

    /// Claims equivalent to an access token of the session (no `exp` of their own: the session's
    /// end is the token's), or nil when no live session has this token in this app.
    /// `readsProfile` (the gateway, which every request passes): the user's profile is read too,
    /// through the `user_profiles` view: a disabled user's token is refused on the spot, and the
    /// claims say whether the user is a guest (guest upgrades). The workers only compare uid and
    /// session, and lack the view.
    public func claims(token: String, app: AppRecord, readsProfile: Bool) throws -> AccessTokenClaims? {
        guard token.utf8.count <= 128 else { return nil }
        let profile = readsProfile
            ? "LEFT JOIN user_profiles p ON p.app_id = s.app_id AND p.uid = s.uid" : "LEFT JOIN (SELECT NULL::boolean AS is_guest, NULL::boolean AS disabled) p ON true"
        let row = try pool.withConnection { connection in
            try connection.query("""
                SELECT s.id, s.uid, s.amr, s.aal, extract(epoch FROM s.expires_at)::bigint AS exp,
                       extract(epoch FROM s.created_at)::bigint AS iat, coalesce(p.is_guest, false) AS is_guest,
                       coalesce(p.disabled, false) AS disabled
                FROM sessions s \(profile)
                WHERE s.app_id = $1 AND s.session_token_hash = $2 AND s.ended_at IS NULL AND s.expires_at > now()
                """, [app.id, PGParam.bytea(SessionToken.hash(token))]).first
        }
        guard let row, try !row.bool("disabled") else { return nil }
        return AccessTokenClaims(iss: app.issuer, aud: app.id, sub: try row.string("uid"), sid: try row.string("id"),
                                 iat: try row.int64("iat"), exp: try row.int64("exp"), jti: "session-token",
                                 amr: try row.stringArray("amr"), aal: try row.int("aal"), isGuest: try row.bool("is_guest"), email: nil,
                                 emailVerified: false, roles: [])
    }

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

    /// The app's profile gives its clients session tokens (`session-object`, `single-token`).
    public func profileHasSessionTokens(appId: String, on connection: PGConnection) throws -> Bool {
        try !connection.query("""
            SELECT 1 FROM app_client_profiles WHERE app_id = $1 AND profile IN ('session-object', 'single-token')
            """, [appId]).isEmpty
    }
}
