import Foundation
import IdentityCredentials
import IdentityKit

/// `identity.token.v1.ProviderSignIn`: an identity the provider worker verified becomes a signed-in
/// user (docs/api-contract.md, "Linking and guests"): found by the provider's subject, else linked
/// to the account with the same verified email, else a new account. Everything, the nonce spend
/// included, is one transaction: a refused sign-in spends nothing.
struct ProviderSignIn: Sendable {
    let pool: PGPool
    let users: UserStore
    let identities: IdentityStore
    let nonces: NonceStore
    let outcome: SignInOutcome
    let masterKey: [UInt8]
    let identitySeal: ProviderIdentitySeal

    func handle(_ command: TokenV1.ProviderSignIn, _ context: CommandContext) throws -> TokenV1.AuthResult {
        if let replay = try outcome.replay(context, appId: command.appId, users: users) { return replay }
        guard let identity = command.identity else { throw ServiceError.validationFailed([]) }
        try ProviderAccounts.requireSealed(identity, appId: command.appId, seal: identitySeal)
        let signingKey = try outcome.signingKey(appId: command.appId)
        let (user, decision, created) = try pool.transaction { connection -> (UserRecord, SignInOutcome.Decision, Bool) in
            try ProviderAccounts.spendNonce(identity, appId: command.appId, nonces: nonces, on: connection)
            let found: (UserRecord, Bool)
            if let guest = try GuestUpgrade.guest(command.guestUid, appId: command.appId, users: users, on: connection) {
                found = (try upgrade(guest, with: identity, command: command, on: connection), false)
            } else {
                found = try account(for: identity, command: command, on: connection)
            }
            let created = found.1
            guard !found.0.disabled else { throw ServiceError.userDisabled }
            let user = try users.fillMissing(appId: command.appId, uid: found.0.uid,
                                             firstName: command.firstName ?? identity.firstName,
                                             lastName: command.lastName ?? identity.lastName,
                                             photoURL: identity.photoUrl, phone: identity.phone, on: connection) ?? found.0
            if let code = command.authorizationCode, !code.isEmpty, identity.provider == "apple" {
                try ProviderAccounts.queueAppleCodeExchange(code: code, identity: identity, appId: command.appId,
                                                            uid: user.uid, masterKey: masterKey, on: connection)
            }
            return (user, try outcome.decide(for: user, by: .provider(identity.provider), client: command.client,
                                             command: context, createdAccount: created, on: connection), created)
        }
        return try outcome.answer(decision, for: user, isNewUser: created, signingKey: signingKey)
    }

    /// The guest becomes the identity's account, unless the identity or its email already
    /// belongs to another account: then 409, and the rollback leaves the nonce unspent.
    private func upgrade(_ guest: UserRecord, with identity: ProviderV1.VerifiedIdentity, command: TokenV1.ProviderSignIn,
                         on connection: PGConnection) throws -> UserRecord {
        let appId = command.appId
        if try identities.owner(appId: appId, provider: identity.provider, subject: identity.subject, on: connection) != nil {
            throw ServiceError.accountExists
        }
        let email = identity.email.flatMap { $0.isEmpty ? nil : $0 }
        if let email, let other = try users.find(appId: appId, email: email, on: connection), other.uid != guest.uid {
            throw ServiceError.accountExists
        }
        try link(identity, to: guest.uid, appId: appId, on: connection)
        var upgrade = UserStore.Upgrade()
        upgrade.email = email
        upgrade.emailVerified = email != nil && identity.emailVerified
        upgrade.firstName = command.firstName ?? identity.firstName
        upgrade.lastName = command.lastName ?? identity.lastName
        upgrade.photoURL = identity.photoUrl
        upgrade.phone = identity.phone
        return try GuestUpgrade.apply(upgrade, to: guest, users: users, on: connection)
    }

    /// The account this identity signs in to, and whether it was created now.
    private func account(for identity: ProviderV1.VerifiedIdentity, command: TokenV1.ProviderSignIn,
                         on connection: PGConnection) throws -> (UserRecord, Bool) {
        let appId = command.appId
        if let uid = try identities.owner(appId: appId, provider: identity.provider, subject: identity.subject, on: connection),
           let user = try users.find(appId: appId, uid: uid, on: connection) {
            return (user, false)
        }
        if let email = identity.email, !email.isEmpty, let existing = try users.find(appId: appId, email: email, on: connection) {
            // Linking by email is safe only when both sides proved they own it.
            // Both sides must have proved the address, the provider as an authority for it.
            guard existing.emailVerified && identity.emailVerified && identity.emailAuthoritative else {
                throw ServiceError.accountExistsWithDifferentCredential
            }
            try link(identity, to: existing.uid, appId: appId, on: connection)
            // A new way in all the same: the owner hears of it like of a link they made.
            try SecurityAlerts().raise(.providerLinked, appId: appId, uid: existing.uid,
                                       context: .init(ip: command.client?.ip ?? "", userAgent: command.client?.userAgent ?? "",
                                                      provider: identity.provider), on: connection)
            return (try users.find(appId: appId, uid: existing.uid, on: connection) ?? existing, false)
        }
        var new = UserStore.NewUser(email: identity.email, username: nil, firstName: command.firstName ?? identity.firstName,
                                    lastName: command.lastName ?? identity.lastName, passwordHash: nil)
        new.emailVerified = identity.email != nil && identity.emailVerified
        new.phone = identity.phone
        new.photoURL = identity.photoUrl
        let user: UserRecord
        do {
            user = try outcome.issuer.hooks.createAccount(appId: appId, method: "provider:" + identity.provider, new: new,
                                                          ip: command.client?.ip, on: connection) {
                try users.insert(new, appId: appId, on: connection)
            }
        } catch UserStore.Conflict.email {
            throw ServiceError.accountExistsWithDifferentCredential
        }
        try link(identity, to: user.uid, appId: appId, on: connection)
        try Events.userCreated(appId: appId, uid: user.uid, email: user.email, on: connection)
        return (try users.find(appId: appId, uid: user.uid, on: connection) ?? user, true)
    }

    private func link(_ identity: ProviderV1.VerifiedIdentity, to uid: String, appId: String,
                      on connection: PGConnection) throws {
        do {
            try identities.link(appId: appId, uid: uid, provider: identity.provider, subject: identity.subject,
                                email: identity.email, on: connection)
        } catch IdentityStore.Conflict.taken {
            // The account already has another identity of this provider.
            throw ServiceError.accountExistsWithDifferentCredential
        }
    }
}
