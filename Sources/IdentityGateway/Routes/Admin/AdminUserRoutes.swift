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
        var body = try BodyReader(context)
        let email = body.optionalString("email", maxLength: 254).string
        let password = body.optionalString("password", maxLength: 256).string
        let verified = body.optionalBool("email_verified") ?? false
        let phone = body.optionalString("phone", maxLength: 16, validate: AdminFields.phone).string
        let username = body.optionalString("username", maxLength: 32, validate: FieldRules.username).string
        let (firstName, lastName) = body.optionalNames()
        let roles = AdminFields.roles(&body) ?? []
        let claims = AdminFields.customClaims(&body) ?? ""
        let appMetadata = AdminFields.metadata("app_metadata", &body) ?? ""
        let userMetadata = AdminFields.metadata("user_metadata", &body) ?? ""
        if email == nil && phone == nil && username == nil {
            body.add(.init(location: "body.email", message: "one of email, phone or username is required"))
        }
        if password != nil && email == nil && username == nil {
            body.add(.init(location: "body.password", message: "needs an email or a username to sign in with"))
        }
        try body.finish()
        // As sign-up: a malformed address is its own code (no JSON Schema can say which are).
        if let email, AdminFields.email(email) != nil { throw ServiceError.invalidEmail() }
        let command = AdminV1.CreateUser(
            appId: caller.app.id, email: email, password: password, emailVerified: verified, phone: phone,
            username: username, firstName: firstName, lastName: lastName, roles: roles, customClaimsJson: claims,
            appMetadataJson: appMetadata, userMetadataJson: userMetadata, actor: caller.actor)
        return commands.send(command, expecting: TokenV1.UserResult.self, appId: caller.app.id, request: context.request) {
            HTTPResponse.data($0.user.map(UserJSON.admin) ?? .null, status: 201)
        }
    }

    /// Profile fields (null clears), `email_verified`, roles (replaced), custom claims and
    /// metadata (each replaced as a whole; null empties it).
    func adminUpdateUser(_ context: RouteContext) throws -> RouteResult {
        let caller = try context.requireAdmin()
        let uid = try Self.uid(context)
        var body = try BodyReader(context)
        var command = AdminV1.UpdateUser(appId: caller.app.id, uid: uid, actor: caller.actor)
        var clear: [String] = []
        let text = { (key: String, value: BodyReader.Optional) -> String? in
            if value == .null { clear.append(key) }
            return value.string
        }
        command.email = text("email", body.optionalString("email", maxLength: 254))
        command.emailVerified = body.optionalBool("email_verified")
        command.phone = text("phone", body.optionalString("phone", maxLength: 16, validate: AdminFields.phone))
        command.username = text("username", body.optionalString("username", maxLength: 32, validate: FieldRules.username))
        command.firstName = text("first_name", body.optionalString("first_name", maxLength: 100))
        command.lastName = text("last_name", body.optionalString("last_name", maxLength: 100))
        if let roles = AdminFields.roles(&body) {
            command.setRoles = true
            command.roles = roles
        } else if body.value("roles") == .null {
            command.setRoles = true
        }
        command.customClaimsJson = AdminFields.customClaims(&body)
        command.appMetadataJson = AdminFields.metadata("app_metadata", &body)
        command.userMetadataJson = AdminFields.metadata("user_metadata", &body)
        try body.finish()
        if let email = command.email, AdminFields.email(email) != nil { throw ServiceError.invalidEmail() }
        command.clearFields = clear
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
        let items: [JSONValue] = try sessions.live(appId: caller.app.id, uid: uid).map { session in
            .object([
                "id": .string(session.id),
                "created_at": .string(Timestamp.rfc3339(microsecondsSinceEpoch: session.createdAtMicros)),
                "last_seen_at": .string(Timestamp.rfc3339(microsecondsSinceEpoch: session.lastSeenAtMicros)),
                "expires_at": .string(Timestamp.rfc3339(microsecondsSinceEpoch: session.expiresAtMicros)),
                "ip": JSONValue(session.ip),
                "user_agent": JSONValue(session.userAgent),
                "amr": JSONValue(session.amr),
                "mfa_verified": .bool(session.amr.contains("mfa")),
            ])
        }
        return .now(.data(.array(items)))
    }

    func adminEndSession(_ context: RouteContext) throws -> RouteResult {
        let caller = try context.requireAdmin()
        let uid = try Self.uid(context)
        guard let id = context.request.parameters["session_id"], id.utf8.count <= 64 else { throw ServiceError.notFound }
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
        guard let uid = context.request.parameters["uid"], uid.utf8.count <= 64 else { throw ServiceError.notFound }
        return uid
    }

    func adminGetUser(_ context: RouteContext) throws -> RouteResult {
        let caller = try context.requireAdmin()
        guard let uid = context.request.parameters["uid"], uid.utf8.count <= 64,
              let user = try users.find(appId: caller.app.id, uid: uid) else { throw ServiceError.notFound }
        return .now(.data(UserJSON.admin(user.message)))
    }
}
