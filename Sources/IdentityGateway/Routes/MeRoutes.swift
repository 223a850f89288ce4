import IdentityKit

/// `GET /v1/me` (a read, served from memory while this replica hears the store's changes:
/// `SessionReads`) and `PATCH /v1/me` (a command, its handler
/// generated from its declaration: fields given as null are cleared).
struct MeRoutes: MeApiHandlers {
    let auth: Authenticator
    /// The session and its user (the `user_profiles` read model: the gateway's role may not read `users`).
    let reads: SessionReads
    let commands: CommandSender

    func getMe(_ context: RouteContext) throws -> RouteResult {
        let claims = try context.requireCaller()
        // A token whose session ended or whose user is gone is no longer valid, whatever its `exp` says.
        guard let live = try reads.liveSession(appId: claims.aud, uid: claims.sub, sessionId: claims.sid) else {
            throw ServiceError.invalidToken
        }
        return .now(live.user.meResponse)
    }
}
