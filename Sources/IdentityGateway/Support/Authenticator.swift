import IdentityKit

/// Who is calling: a valid access token of this app whose session still lives. The session is
/// checked in the store on each request, so a signed-out token is refused by every gateway
/// replica from the moment the sign-out committed, not only at `exp`.
struct Authenticator: Sendable {
    let verifier: TokenVerifier
    let sessions: SessionStore

    /// The claims of the caller's token, after the signature, `exp` and audience checks only.
    /// Callers that read the session anyway (GET /v1/me, the session list) check it there.
    func claims(_ context: RouteContext) throws -> AccessTokenClaims {
        try verifier.verify(authorization: context.request.header("authorization"), app: try context.requireApp())
    }

    /// The claims, once the store confirms the session is live.
    func liveSession(_ context: RouteContext) throws -> AccessTokenClaims {
        let claims = try claims(context)
        guard try sessions.isLive(appId: claims.aud, sessionId: claims.sid, uid: claims.sub) else {
            throw ServiceError.invalidToken
        }
        return claims
    }

    /// The caller of an operation that takes an access token optionally (BEARER_OPTIONAL): nil
    /// without one; a token that does not verify, is another app's or whose session ended is a
    /// 401, so a client bug never turns a call made in a session into an anonymous one.
    func optionalCaller(_ context: RouteContext) throws -> AccessTokenClaims? {
        guard context.request.header("authorization") != nil else { return nil }
        let claims = try liveSession(context)
        guard claims.aud == (try context.requireApp()).id else { throw ServiceError.invalidToken }
        return claims
    }

    /// The guest a sign-in or sign-up call upgrades: the uid of a valid guest token with a live
    /// session. No token → nil; a non-guest's valid token is ignored (a plain sign-in); a token
    /// that does not verify → 401, so a client bug is not silently turned into a new account.
    func upgradingGuest(_ context: RouteContext) throws -> String? {
        guard context.request.header("authorization") != nil else { return nil }
        let claims = try claims(context)
        guard claims.isGuest else { return nil }
        guard try sessions.isLive(appId: claims.aud, sessionId: claims.sid, uid: claims.sub) else {
            throw ServiceError.invalidToken
        }
        return claims.sub
    }
}
