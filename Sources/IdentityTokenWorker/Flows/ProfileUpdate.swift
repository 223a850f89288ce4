import IdentityKit

/// `identity.token.v1.UpdateProfile` (PATCH /v1/me).
struct ProfileUpdate: Sendable {
    let users: UserStore

    func handle(_ command: TokenV1.UpdateProfile) throws -> TokenV1.UserResult {
        var set: [ProfileField: String] = [:]
        if let value = command.firstName { set[.firstName] = value }
        if let value = command.lastName { set[.lastName] = value }
        if let value = command.photoUrl { set[.photoURL] = value }
        if let value = command.username { set[.username] = value }
        let clear = Set(command.clearFields.compactMap(ProfileField.init(rawValue:)))
        do {
            guard let user = try users.updateProfile(appId: command.appId, uid: command.uid, set: set, clear: clear) else {
                throw ServiceError.invalidToken
            }
            return TokenV1.UserResult(user: user.message)
        } catch UserStore.Conflict.username {
            throw ServiceError.usernameTaken
        }
    }
}
