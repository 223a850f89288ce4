import IdentityKit

/// `identity.token.v1.UpdateProfile` (PATCH /v1/me), with its `user.updated` event.
struct ProfileUpdate: Sendable {
    let pool: PGPool
    let users: UserStore

    func handle(_ command: TokenV1.UpdateProfile) throws -> TokenV1.UserResult {
        var set: [ProfileField: String] = [:]
        if let value = command.firstName { set[.firstName] = value }
        if let value = command.lastName { set[.lastName] = value }
        if let value = command.photoUrl { set[.photoURL] = value }
        if let value = command.username { set[.username] = value }
        let clear = Set(command.clearFields.compactMap(ProfileField.init(rawValue:)))
        do {
            let user = try pool.transaction { connection -> UserRecord in
                guard let user = try users.updateProfile(appId: command.appId, uid: command.uid, set: set, clear: clear,
                                                         on: connection) else { throw ServiceError.invalidToken }
                try Events.userUpdated(appId: command.appId, uid: user.uid, change: "profile", on: connection)
                return user
            }
            return TokenV1.UserResult(user: user.message)
        } catch UserStore.Conflict.username {
            throw ServiceError.usernameTaken
        }
    }
}
