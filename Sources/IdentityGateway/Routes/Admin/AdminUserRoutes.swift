import Foundation
import IdentityKit

/// `/v1/admin/users…`: the app's backend manages its users with its secret key. Reads come
/// from the `user_profiles` view; every change is a command to the token worker (or, for
/// sessions, the revocation worker). The app is the secret key's own: every query and command
/// carries its id, so another app's uid is simply not found.
struct AdminUserRoutes: AdminUserApiHandlers {
    let users: UserProfileStore
    let sessions: SessionStore
    let commands: CommandSender

    // The declared operations that share a handler, each with its own route.
    func adminDisableUser(_ context: RouteContext) throws -> RouteResult { try setDisabled(context, true) }
    func adminEnableUser(_ context: RouteContext) throws -> RouteResult { try setDisabled(context, false) }

    func adminListUsers(_ context: RouteContext) throws -> RouteResult {
        let caller = try context.requireAdmin()
        var query = QueryReader(context.request)
        var filter = UserProfileStore.Filter(limit: query.integer("limit", in: 1...100) ?? 50)
        filter.emailPrefix = query.string("email", maxLength: 254)
        filter.phonePrefix = query.string("phone", maxLength: 32)
        filter.usernamePrefix = query.string("username", maxLength: 32)
        filter.provider = query.oneOf("provider", ["password", "apple", "google", "firebase"])
        filter.createdAfter = query.time("created_after").map(Timestamp.rfc3339(microsecondsSinceEpoch:))
        filter.createdBefore = query.time("created_before").map(Timestamp.rfc3339(microsecondsSinceEpoch:))
        filter.disabled = query.bool("disabled")
        filter.guest = query.bool("guest")
        if let cursor = query.string("cursor", maxLength: 64) {
            // The cursor is the last uid of the previous page (a ULID), nothing else.
            if cursor.utf8.count == 26, cursor.utf8.allSatisfy({ ($0 >= 48 && $0 <= 57) || ($0 >= 97 && $0 <= 122) }) {
                filter.beforeUid = cursor
            } else {
                query.add(.init(location: "query.cursor", message: "must be a next_cursor this endpoint gave"))
            }
        }
        try query.finish()
        let page = try users.list(appId: caller.app.id, filter)
        let next: JSONValue = page.count == filter.limit ? JSONValue(page.last?.uid) : .null
        return .now(.json(.object([
            "data": .array(page.map { UserJSON.admin($0.message) }),
            "next_cursor": next,
        ])))
    }

    /// A user made by the app's backend, with or without a password (Argon2id by the worker).
    func adminCreateUser(_ context: RouteContext) throws -> RouteResult {
        let caller = try context.requireAdmin()
        let body = try GatewayV1.AdminUserCreate(declaredBodyOf: context)
        let command = AdminV1.CreateUser(
            appId: caller.app.id, email: body.email, password: body.password, emailVerified: body.emailVerified ?? false,
            phone: body.phone, username: body.username, firstName: body.firstName, lastName: body.lastName,
            roles: body.roles, customClaimsJson: body.customClaims ?? "", appMetadataJson: body.appMetadata ?? "",
            userMetadataJson: body.userMetadata ?? "", actor: caller.actor)
        return commands.send(command, expecting: TokenV1.UserResult.self, appId: caller.app.id, request: context.request) {
            HTTPResponse.data($0.user.map(UserJSON.admin) ?? .null, status: 201)
        }
    }

    /// Profile fields (null clears), `email_verified`, roles (replaced), custom claims and
    /// metadata (each replaced as a whole; null empties it).
    func adminUpdateUser(_ context: RouteContext) throws -> RouteResult {
        let caller = try context.requireAdmin()
        let uid = try Self.uid(context)
        let body = try GatewayV1.AdminUserUpdate(declaredBodyOf: context)
        let command = AdminV1.UpdateUser(
            appId: caller.app.id, uid: uid, email: body.email, emailVerified: body.emailVerified, phone: body.phone,
            username: body.username, firstName: body.firstName, lastName: body.lastName, clearFields: body.cleared,
            setRoles: body.rolesGiven, roles: body.roles, customClaimsJson: body.customClaims,
            appMetadataJson: body.appMetadata, userMetadataJson: body.userMetadata, actor: caller.actor)
        return commands.send(command, expecting: TokenV1.UserResult.self, appId: caller.app.id, request: context.request) {
            HTTPResponse.data($0.user.map(UserJSON.admin) ?? .null)
        }
    }

    /// As `DELETE /v1/me`, the secret key standing for the proof: sessions end, rows go,
    /// Apple's token is revoked at Apple, `user.deleted`.
    func adminDeleteUser(_ context: RouteContext) throws -> RouteResult {
        let caller = try context.requireAdmin()
        let command = AdminV1.DeleteUser(appId: caller.app.id, uid: try Self.uid(context), actor: caller.actor)
        return commands.send(command, expecting: AdminV1.UserDeleted.self, appId: caller.app.id,
                             request: context.request) { _ in .noContent }
    }

    /// Disable ends every session at once (access tokens refused from the commit, refreshes
    /// 403 `auth/user-disabled` like every sign-in) and publishes `user.disabled`.
    func setDisabled(_ context: RouteContext, _ disabled: Bool) throws -> RouteResult {
        let caller = try context.requireAdmin()
        let command = AdminV1.SetUserDisabled(appId: caller.app.id, uid: try Self.uid(context), disabled: disabled,
                                              actor: caller.actor, ip: context.request.clientIP)
        return commands.send(command, expecting: TokenV1.UserResult.self, appId: caller.app.id, request: context.request) {
            HTTPResponse.data($0.user.map(UserJSON.admin) ?? .null)
        }
    }

    /// `POST /v1/admin/users/{uid}/mfa/reset`: recovery for a user who lost every factor.
    func adminResetUserMfa(_ context: RouteContext) throws -> RouteResult {
        let caller = try context.requireAdmin()
        let command = AdminV1.ResetUserMfa(appId: caller.app.id, uid: try Self.uid(context), actor: caller.actor,
                                           ip: context.request.clientIP)
        return commands.send(command, expecting: TokenV1.UserResult.self, appId: caller.app.id, request: context.request) {
            HTTPResponse.data($0.user.map(UserJSON.admin) ?? .null)
        }
    }

    func adminListSessions(_ context: RouteContext) throws -> RouteResult {
        let caller = try context.requireAdmin()
        let uid = try Self.uid(context)
        guard try users.find(appId: caller.app.id, uid: uid) != nil else { throw ServiceError.notFound }
        let items = try sessions.live(appId: caller.app.id, uid: uid).map(AnswerJSON.sessionRecord)
        return .now(.data(.array(items)))
    }

    func adminEndSession(_ context: RouteContext) throws -> RouteResult {
        let caller = try context.requireAdmin()
        let uid = try Self.uid(context)
        guard let id = context.request.parameters["session_id"] else { throw ServiceError.notFound }
        let command = RevocationV1.EndSession(appId: caller.app.id, uid: uid, sessionId: id, reason: "revoked_by_admin")
        let requestId = context.request.requestId
        return commands.send(command, expecting: RevocationV1.SessionsEnded.self, queue: BusTopology.revocationCommands,
                             appId: caller.app.id, request: context.request) { ended in
            ended.count > 0 ? .noContent : .problem(.notFound, requestId: requestId)
        }
    }

    /// Every live session of the user ends (none live: still 204).
    func adminEndAllSessions(_ context: RouteContext) throws -> RouteResult {
        let caller = try context.requireAdmin()
        let command = RevocationV1.EndAllSessions(appId: caller.app.id, uid: try Self.uid(context), reason: "revoked_by_admin")
        return commands.send(command, expecting: RevocationV1.SessionsEnded.self, queue: BusTopology.revocationCommands,
                             appId: caller.app.id, request: context.request) { _ in .noContent }
    }

    private static func uid(_ context: RouteContext) throws -> String {
        guard let uid = context.request.parameters["uid"] else { throw ServiceError.notFound }
        return uid
    }

    func adminGetUser(_ context: RouteContext) throws -> RouteResult {
        let caller = try context.requireAdmin()
        guard let uid = context.request.parameters["uid"],
              let user = try users.find(appId: caller.app.id, uid: uid) else { throw ServiceError.notFound }
        return .now(.data(UserJSON.admin(user.message)))
    }
}
