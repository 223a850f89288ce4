import IdentityKit

/// `GET /v1/me` (a read, served from the store) and `PATCH /v1/me` (a command).
struct MeRoutes: Sendable {
    let verifier: TokenVerifier
    let users: UserStore
    let sessions: SessionStore
    let commands: CommandSender

    var routes: [Route] {
        [Route(method: "GET", pattern: "/v1/me", needsApp: true, takesBody: false, handler: me),
         Route(method: "PATCH", pattern: "/v1/me", needsApp: true, takesBody: true, handler: update)]
    }

    func me(_ context: RouteContext) throws -> RouteResult {
        let app = try context.requireApp()
        let claims = try verifier.verify(authorization: context.request.header("authorization"), app: app)
        // A token whose session ended or whose user is gone is no longer valid, whatever its `exp` says.
        guard let user = try users.find(appId: app.id, uid: claims.sub, liveSessionId: claims.sid) else {
            throw ServiceError.invalidToken
        }
        return .now(.data(UserJSON.make(user.message)))
    }

    func update(_ context: RouteContext) throws -> RouteResult {
        let app = try context.requireApp()
        let claims = try verifier.verify(authorization: context.request.header("authorization"), app: app)
        guard try sessions.isLive(appId: app.id, sessionId: claims.sid, uid: claims.sub) else {
            throw ServiceError.invalidToken
        }
        var body = try BodyReader(context.request.body)
        let fields: [(ProfileField, BodyReader.Optional)] = [
            (.firstName, body.optionalString("first_name", maxLength: 100)),
            (.lastName, body.optionalString("last_name", maxLength: 100)),
            (.photoURL, body.optionalString("photo_url", maxLength: 2048, validate: FieldRules.httpURL)),
            (.username, body.optionalString("username", maxLength: 32, validate: FieldRules.username)),
        ]
        try body.finish()
        let value = { (field: ProfileField) in fields.first { $0.0 == field }?.1.string }
        let command = TokenV1.UpdateProfile(
            appId: app.id, uid: claims.sub, firstName: value(.firstName), lastName: value(.lastName),
            photoUrl: value(.photoURL), username: value(.username),
            clearFields: fields.filter { $0.1 == .null }.map { $0.0.rawValue })
        return commands.send(command, expecting: TokenV1.UserResult.self, appId: app.id, request: context.request) {
            HTTPResponse.data($0.user.map(UserJSON.make) ?? .null)
        }
    }
}
