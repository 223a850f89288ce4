import IdentityCredentials
import IdentityKit

/// A signed-in user's own passkeys: list, rename, remove (never the account's last way to sign in);
/// and the admin API's list of one user's.
struct PasskeyManagement: Sendable {
    let pool: PGPool
    let users: UserStore
    let passkeys: PasskeyStore
    let waysIn: WaysInReader

    func list(_ command: TokenV1.ListPasskeys) throws -> TokenV1.PasskeyList {
        TokenV1.PasskeyList(passkeys: try passkeys.credentials(appId: command.appId, uid: command.uid)
            .map(PasskeyCeremony.message))
    }

    /// The admin API's read of one user's passkeys (the console's user page); no such user is 404.
    func list(_ command: AdminV1.ListUserPasskeys) throws -> TokenV1.PasskeyList {
        try pool.withConnection { connection in
            guard try users.find(appId: command.appId, uid: command.uid, on: connection) != nil else { throw ServiceError.notFound }
            return TokenV1.PasskeyList(passkeys: try passkeys.credentials(appId: command.appId, uid: command.uid, on: connection)
                .map(PasskeyCeremony.message))
        }
    }

    func rename(_ command: TokenV1.RenamePasskey) throws -> TokenV1.PasskeyResult {
        guard !command.name.isEmpty, command.name.count <= PasskeyRegistration.maximumNameLength else {
            throw ServiceError.validationFailed([.init(location: "body.name", message: "must be 1 to 100 characters")])
        }
        guard let record = try passkeys.rename(appId: command.appId, uid: command.uid, id: command.passkeyId,
                                               name: command.name) else { throw ServiceError.notFound }
        return TokenV1.PasskeyResult(passkey: PasskeyCeremony.message(record))
    }

    func delete(_ command: TokenV1.DeletePasskey) throws -> TokenV1.Done {
        try pool.transaction { connection in
            // Locked, so two removals at once cannot each leave the other as the last method
            // (the same lock unlinking a provider takes).
            guard try users.lock(appId: command.appId, uid: command.uid, on: connection),
                  let user = try users.find(appId: command.appId, uid: command.uid, on: connection)
            else { throw ServiceError.invalidToken }
            let owned = try passkeys.credentials(appId: command.appId, uid: command.uid, on: connection)
            guard owned.contains(where: { $0.id == command.passkeyId }) else { throw ServiceError.notFound }
            try waysIn.requireAnother(user, on: connection)
            _ = try passkeys.delete(appId: command.appId, uid: command.uid, id: command.passkeyId, on: connection)
            try Events.passkeyRemoved(appId: command.appId, uid: command.uid, passkeyId: command.passkeyId, on: connection)
            try SecurityAlerts().raise(.passkeyRemoved, appId: command.appId, uid: command.uid,
                                       context: .init(sessionId: command.sessionId), on: connection)
        }
        return TokenV1.Done()
    }
}
