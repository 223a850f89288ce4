import Foundation
import IdentityKit

/// Tokens and sessions: refresh (token worker; its handler generated from its declaration),
/// sign-out and session ending (revocation worker, committed before the answer), and the
/// session list (a read).
struct SessionRoutes: SessionApiHandlers {
    let auth: Authenticator
    let sessions: SessionStore
    let commands: CommandSender

    func signOut(_ context: RouteContext) throws -> RouteResult {
        let claims = try context.requireCaller()
        let command = RevocationV1.EndSession(appId: claims.aud, uid: claims.sub, sessionId: claims.sid, reason: "sign_out")
        return commands.send(command, expecting: RevocationV1.SessionsEnded.self, queue: BusTopology.revocationCommands,
                             appId: claims.aud, request: context.request) { _ in .noContent }
    }

    func signOutAll(_ context: RouteContext) throws -> RouteResult {
        let claims = try context.requireCaller()
        let command = RevocationV1.EndAllSessions(appId: claims.aud, uid: claims.sub, reason: "sign_out_all")
        return commands.send(command, expecting: RevocationV1.SessionsEnded.self, queue: BusTopology.revocationCommands,
                             appId: claims.aud, request: context.request) { _ in .noContent }
    }

    func listSessions(_ context: RouteContext) throws -> RouteResult {
        let claims = try context.requireCaller()
        let live = try sessions.live(appId: claims.aud, uid: claims.sub)
        // The caller's own session must be among the live ones: one query checks both.
        guard live.contains(where: { $0.id == claims.sid }) else { throw ServiceError.invalidToken }
        let items = live.map { AnswerJSON.session($0, current: $0.id == claims.sid) }
        return .now(.data(.array(items)))
    }

    func endSession(_ context: RouteContext) throws -> RouteResult {
        let claims = try context.requireCaller()
        guard let id = context.request.parameters["id"] else { throw ServiceError.notFound }
        // Scoped by the caller's uid: another user's session id ends nothing and answers 404.
        let command = RevocationV1.EndSession(appId: claims.aud, uid: claims.sub, sessionId: id, reason: "revoked_by_user")
        let requestId = context.request.requestId
        return commands.send(command, expecting: RevocationV1.SessionsEnded.self, queue: BusTopology.revocationCommands,
                             appId: claims.aud, request: context.request) { ended in
            ended.count > 0 ? .noContent : .problem(.notFound, requestId: requestId)
        }
    }
}
