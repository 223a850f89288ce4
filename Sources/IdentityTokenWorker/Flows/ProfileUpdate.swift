import Foundation
import IdentityCredentials
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
        if let value = try MessageLanguages.checked(command.locale) { set[.locale] = value }
        let clear = Set(command.clearFields.compactMap(ProfileField.init(rawValue:)))
        if let metadata = command.userMetadataJson {
            guard metadata.utf8.count <= 8192, case .object? = JSONValue.parse(Data(metadata.utf8)) else {
                throw ServiceError.validationFailed([.init(location: "body.user_metadata",
                                                           message: "must be a JSON object of at most 8192 bytes")])
            }
        }
        do {
            let user = try pool.transaction { connection -> UserRecord in
                guard var user = try users.updateProfile(appId: command.appId, uid: command.uid, set: set, clear: clear,
                                                         on: connection) else { throw ServiceError.invalidToken }
                if let metadata = command.userMetadataJson {
                    // The user's own metadata; app_metadata and claims are the app's backend's alone.
                    var changes = UserAdminStore.Changes()
                    changes.userMetadata = metadata
                    user = try UserAdminStore.update(appId: command.appId, uid: command.uid, changes, on: connection) ?? user
                }
                try Events.userUpdated(appId: command.appId, uid: user.uid, change: "profile", on: connection)
                return user
            }
            return TokenV1.UserResult(user: user.message)
        } catch UserStore.Conflict.username {
            throw ServiceError.usernameTaken
        }
    }
}
