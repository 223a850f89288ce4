import IdentityKit

/// Starts a session for a signed-in user and mints its token pair: the session row and the
/// first refresh token's hash are written in the caller's transaction; the access token is
/// signed after, with the app's current key.
struct SessionIssuer: Sendable {
    let sessions: SessionStore
    let keys: SigningKeyCache
    let refreshTokenLifetimeSeconds: Int

    struct Started {
        let sessionId: String
        let refreshToken: String
    }

    func start(for user: UserRecord, amr: [String], client: CommonV1.ClientInfo?, on connection: PGConnection) throws -> Started {
        let sessionId = Identifiers.prefixed("ses")
        let refreshToken = Identifiers.secret("rt")
        try sessions.create(appId: user.appId, uid: user.uid, sessionId: sessionId, amr: amr,
                            ip: client?.ip ?? "", userAgent: client?.userAgent ?? "",
                            refreshTokenHash: Digest.sha256(refreshToken),
                            refreshLifetimeSeconds: refreshTokenLifetimeSeconds, on: connection)
        try Events.sessionCreated(appId: user.appId, uid: user.uid, sessionId: sessionId, amr: amr, on: connection)
        return Started(sessionId: sessionId, refreshToken: refreshToken)
    }

    /// The app's signing key, fetched before a flow writes anything, so a key that cannot be
    /// read fails the command before a user or session is created rather than after.
    func signingKey(appId: String) throws -> SigningKeyCache.Entry {
        guard let entry = try keys.entry(appId: appId) else {
            throw ServiceError(code: "auth/internal", status: 500, detail: "The app has no signing key.")
        }
        return entry
    }

    func result(for user: UserRecord, started: Started, amr: [String], isNewUser: Bool,
                signingKey entry: SigningKeyCache.Entry) throws -> TokenV1.AuthResult {
        try result(for: user, sessionId: started.sessionId, refreshToken: started.refreshToken, amr: amr,
                   isNewUser: isNewUser, signingKey: entry)
    }

    /// The token response for a session: a new access token beside `refreshToken`.
    func result(for user: UserRecord, sessionId: String, refreshToken: String, amr: [String], isNewUser: Bool,
                signingKey entry: SigningKeyCache.Entry) throws -> TokenV1.AuthResult {
        let now = Timestamp.nowSeconds()
        let claims = AccessTokenClaims(
            iss: entry.app.issuer, aud: entry.app.id, sub: user.uid, sid: sessionId,
            iat: now, exp: now + Int64(entry.app.accessTokenTTL), jti: Identifiers.nowULID(),
            amr: amr, isGuest: user.isGuest, email: user.email, emailVerified: user.emailVerified,
            roles: user.roles)
        let accessToken = try JWT.sign(claims, kid: entry.kid, key: entry.key)
        return TokenV1.AuthResult(accessToken: accessToken, tokenType: "Bearer",
                                  expiresIn: Int32(entry.app.accessTokenTTL), refreshToken: refreshToken,
                                  sessionId: sessionId, isNewUser: isNewUser, user: user.message)
    }
}
