import Foundation
import IdentityKit

/// `POST /v1/token/revoke` (RFC 7009) for app backends, with the app's secret key as
/// introspection takes it and the same `token` body. A token of the app ends its session through
/// the revocation worker's `EndSession`, as a sign-out does (carrying the app's secret key, the
/// authority the worker checks for the app's backend): the session's refresh tokens stop at
/// once and its access tokens are refused by every check that reads the session. Anything else
/// (unknown, expired, spent, malformed, another app's) answers the same 200 and ends nothing, so
/// the answer tells a caller nothing about a token it cannot revoke.
struct TokenRevocationRoutes: RevocationApiHandlers {
    let verifier: TokenVerifier
    let store: IntrospectionStore
    let commands: CommandSender

    func revokeToken(_ context: RouteContext) throws -> RouteResult {
        let caller = try context.requireAdmin()
        let app = caller.app
        let token = try IntrospectionRoutes.token(context.request)
        let revoked = HTTPResponse.json(.object([:]))
        guard let owner = try session(of: token, app: app) else { return .now(revoked) }
        let command = RevocationV1.EndSession(appId: app.id, uid: owner.uid, sessionId: owner.sessionId,
                                              reason: "revoked_by_client")
        return commands.send(command, expecting: RevocationV1.SessionsEnded.self, queue: BusTopology.revocationCommands,
                             appId: app.id, request: context.request, authority: caller.secretKey) { _ in revoked }
    }

    /// The user and session of a token of `app`: a live refresh token, or an access token this
    /// app signed that has not expired. Nil for anything else.
    private func session(of token: String, app: AppRecord) throws -> (uid: String, sessionId: String)? {
        if token.hasPrefix("rt_") {
            guard token.utf8.count <= 128, let found = try store.refreshToken(appId: app.id, token: token) else { return nil }
            return (found.uid, found.sessionId)
        }
        do {
            let claims = try verifier.verify(authorization: "Bearer " + token, app: app)
            return (claims.sub, claims.sid)
        } catch let refused as ServiceError where refused.status == 401 {
            return nil  // not a token of this app (a store that did not answer is a 503, not a "revoked")
        }
    }
}
