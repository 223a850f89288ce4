import IdentityCredentials
import IdentityKit

/// `LinkIdentity` / `UnlinkIdentity`: a signed-in user adds or removes a provider identity.
struct IdentityLinking: Sendable {
    let pool: PGPool
    let users: UserStore
    let identities: IdentityStore
    let nonces: NonceStore
    let masterKey: [UInt8]
    let identitySeal: ProviderIdentitySeal
    let waysIn: WaysInReader

    func link(_ command: TokenV1.LinkIdentity) throws -> TokenV1.UserResult {
        guard let identity = command.identity else { throw ServiceError.validationFailed([]) }
        try ProviderAccounts.requireSealed(identity, appId: command.appId, seal: identitySeal)
        let user = try pool.transaction { connection -> UserRecord in
            try ProviderAccounts.spendNonce(identity, appId: command.appId, nonces: nonces, on: connection)
            if let owner = try identities.owner(appId: command.appId, provider: identity.provider,
                                                subject: identity.subject, on: connection) {
                guard owner == command.uid else { throw ServiceError.accountExists }
            } else {
                do {
                    try identities.link(appId: command.appId, uid: command.uid, provider: identity.provider,
                                        subject: identity.subject, email: identity.email, on: connection)
                } catch IdentityStore.Conflict.taken {
                    // The user already has another identity of this provider.
                    throw ServiceError.accountExists
                }
            }
            if let code = command.authorizationCode, !code.isEmpty, identity.provider == "apple" {
                try ProviderAccounts.queueAppleCodeExchange(code: code, identity: identity, appId: command.appId,
                                                            uid: command.uid, masterKey: masterKey, on: connection)
            }
            guard let user = try users.fillMissing(appId: command.appId, uid: command.uid, firstName: identity.firstName,
                                                   lastName: identity.lastName, photoURL: identity.photoUrl,
                                                   phone: identity.phone, on: connection)
            else { throw ServiceError.invalidToken }
            try SecurityAlerts().raise(.providerLinked, appId: command.appId, uid: command.uid,
                                       context: .init(sessionId: command.sessionId, provider: identity.provider),
                                       on: connection)
            return user
        }
        return TokenV1.UserResult(user: user.message)
    }

    func unlink(_ command: TokenV1.UnlinkIdentity) throws -> TokenV1.UserResult {
        let user = try pool.transaction { connection -> UserRecord in
            // Locked, so two unlinks at once cannot each leave the other as the last method.
            guard try users.lock(appId: command.appId, uid: command.uid, on: connection),
                  let user = try users.find(appId: command.appId, uid: command.uid, on: connection)
            else { throw ServiceError.invalidToken }
            guard user.identityProviders.contains(command.provider) else { throw ServiceError.notFound }
            try waysIn.requireAnother(user, on: connection)
            _ = try identities.unlink(appId: command.appId, uid: command.uid, provider: command.provider, on: connection)
            try SecurityAlerts().raise(.providerUnlinked, appId: command.appId, uid: command.uid,
                                       context: .init(sessionId: command.sessionId, provider: command.provider),
                                       on: connection)
            return try users.find(appId: command.appId, uid: command.uid, on: connection) ?? user
        }
        return TokenV1.UserResult(user: user.message)
    }
}
