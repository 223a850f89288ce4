import IdentityKit

/// `GET /v1/me` (a read, served from the store) and `PATCH /v1/me` (a command).
struct MeRoutes: MeApiHandlers {
    let auth: Authenticator
    /// The `user_profiles` read model: the gateway's role may not read `users`.
    let users: UserProfileStore
    let commands: CommandSender


    func getMe(_ context: RouteContext) throws -> RouteResult {
        let claims = try context.requireCaller()
        // A token whose session ended or whose user is gone is no longer valid, whatever its `exp` says.
        guard let user = try users.find(appId: claims.aud, uid: claims.sub, liveSessionId: claims.sid) else {
            throw ServiceError.invalidToken
        }
        return .now(.data(UserJSON.make(user.message)))
    }

    func updateMe(_ context: RouteContext) throws -> RouteResult {
        let claims = try context.requireCaller()
        let appId = claims.aud
        var body = try BodyReader(context)
        let fields: [(ProfileField, BodyReader.Optional)] = [
            (.firstName, body.optionalString("first_name", maxLength: 100)),
            (.lastName, body.optionalString("last_name", maxLength: 100)),
            (.photoURL, body.optionalString("photo_url", maxLength: 2048, validate: FieldRules.httpURL)),
            (.username, body.optionalString("username", maxLength: 32, validate: FieldRules.username)),
        ]
        let metadata = AdminFields.metadata("user_metadata", &body)
        try body.finish()
        let value = { (field: ProfileField) in fields.first { $0.0 == field }?.1.string }
        let command = TokenV1.UpdateProfile(
            appId: appId, uid: claims.sub, firstName: value(.firstName), lastName: value(.lastName),
            photoUrl: value(.photoURL), username: value(.username),
            clearFields: fields.filter { $0.1 == .null }.map { $0.0.rawValue }, userMetadataJson: metadata)
        return commands.send(command, expecting: TokenV1.UserResult.self, appId: appId, request: context.request) {
            HTTPResponse.data($0.user.map(UserJSON.make) ?? .null)
        }
    }
}
