import IdentityKit

/// `GET /v1/me` (a read, served from the store) and `PATCH /v1/me` (a command, its handler
/// generated from its declaration: fields given as null are cleared).
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
}
