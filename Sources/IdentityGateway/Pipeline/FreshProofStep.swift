import IdentityKit

/// What a route asks of its caller's proof beyond a valid access token (fresh proof:
/// docs/api-contract.md, "Account"; the takeover rules of docs/security.md). Every route that adds,
/// replaces or removes a way into an account (a password, a provider link, a passkey, a phone, a
/// second factor, backup codes) declares one, so a stolen access token alone cannot add a lasting
/// way in: `RoutesTests` walks the route table and fails for such a route declared `.none`. The
/// token worker enforces the same rule on the command (`FreshProof` in IdentityTokenWorker), with
/// the MFA half (aal 2 when MFA is on) that only it can read.
enum Proof: Sendable, Equatable {
    /// A valid access token is all the route needs (or none at all).
    case none
    /// The session signed in less than `FreshProofStep.maximumAgeSeconds` ago (and, checked by
    /// the token worker, at aal 2 when the user has MFA on).
    case freshSignIn
    /// A fresh sign-in as above, or the account's password in the body's `password` field
    /// (the token worker checks it; with MFA on only the fresh aal 2 session counts).
    case freshSignInOrPassword
    /// The body carries its own proof the token worker checks (the current password of a
    /// password change; a password, guest secret or provider token for account deletion), and
    /// step-up applies once MFA is on.
    case ownProof

    /// Whether the pipeline checks the session's age before the handler.
    var checksAge: Bool { self == .freshSignIn || self == .freshSignInOrPassword }
}

/// The pipeline's one check of the caller for a route that declares a `Proof`: the bearer is
/// verified, its session read once (live, and its sign-in time), and the verified claims are
/// handed to the handler as `RouteContext.caller`, so the handler verifies nothing again.
struct FreshProofStep: Sendable {
    /// The step-up window (docs/api-contract.md, "Account"), the token worker's too.
    static let maximumAgeSeconds = StepUpWindow.seconds

    let verifier: TokenVerifier
    let sessions: SessionStore

    func check(_ proof: Proof, context: RouteContext) throws -> AccessTokenClaims {
        let claims = try verifier.verify(authorization: context.request.header("authorization"),
                                         app: try context.requireApp())
        guard let session = try sessions.assurance(appId: claims.aud, sessionId: claims.sid, uid: claims.sub) else {
            throw ServiceError.invalidToken
        }
        guard proof.checksAge, session.ageSeconds >= Self.maximumAgeSeconds else { return claims }
        // A stale session may still offer the password instead, where the route takes one.
        if proof == .freshSignInOrPassword, case .string? = context.json?["password"] { return claims }
        throw ServiceError.reauthRequired
    }

    /// The caller of a BEARER route: the token verified and, unless the handler's own read
    /// checks it (`sessionCheckedByHandler`), its session live: one query, once per request.
    func caller(_ context: RouteContext, checkSession: Bool) throws -> AccessTokenClaims {
        let claims = try verifier.verify(authorization: context.request.header("authorization"),
                                         app: try context.requireApp())
        if checkSession, !(try sessions.isLive(appId: claims.aud, sessionId: claims.sid, uid: claims.sub)) {
            throw ServiceError.invalidToken
        }
        return claims
    }

    /// A `session_end` operation in an app whose `session_end_proof` is `fresh`: ending another
    /// session (the path's `id`) or all of them takes a sign-in within the step-up window;
    /// ending the caller's own session does not.
    func checkSessionEnd(_ caller: AccessTokenClaims, context: RouteContext) throws {
        guard try context.requireApp().sessionEndNeedsFreshSignIn, context.request.parameters["id"] != caller.sid else { return }
        guard let session = try sessions.assurance(appId: caller.aud, sessionId: caller.sid, uid: caller.sub),
              session.ageSeconds < Self.maximumAgeSeconds else { throw ServiceError.reauthRequired }
    }

    /// The errors this step may answer, listed in the route's document.
    static let errors: [ServiceError] = .signedIn + [.reauthRequired]
}
