import Foundation
import IdentityCredentials
import IdentityKit

/// `identity.token.v1.DeleteAccount` (DELETE /v1/me): given fresh proof of the account's own
/// credential (for an account without one, a sign-in less than 5 minutes old), every row of the user goes in one transaction, every session ends (with its
/// events and devices), `user.deleted` is published, and Apple's tokens are queued for
/// revocation at Apple (through the outbox, to the revocation worker). Wrong proof → 403
/// `auth/reauth-required` and nothing changes.
struct AccountDeletion: Sendable {
    let pool: PGPool
    let users: UserStore
    let sessions: SessionStore
    let identities: IdentityStore
    let nonces: NonceStore
    let hasher: PasswordHasher
    let guests: GuestSignIn
    let masterKey: [UInt8]
    let identitySeal: ProviderIdentitySeal
    let stepUp: StepUp

    func handle(_ command: TokenV1.DeleteAccount) throws -> TokenV1.Done {
        guard let user = try users.find(appId: command.appId, uid: command.uid) else { throw ServiceError.invalidToken }
        // With MFA on, the proof of the first factor is not enough: a session at aal 2, fresh
        // (checked before this flow: DELETE /v1/me is BEARER_OWN_PROOF, `.stepUpWhenMfaOn`).
        // A password is checked before the transaction: Argon2 should not hold a row lock.
        if let password = command.password {
            guard let hash = user.passwordHash, password.unicodeScalars.count <= PasswordPolicy.maximumLength,
                  hasher.verifyStored(password, against: hash) else { throw ServiceError.reauthRequired }
        } else if command.secret == nil && command.identity == nil {
            // A passwordless account (email codes, passkeys) has no credential to send again:
            // its proof is a fresh sign-in, a session younger than 5 minutes (at aal 2 with MFA
            // on). An account with a password, a provider or a guest secret must send that.
            guard user.passwordHash == nil, !user.isGuest, user.identityProviders.isEmpty else {
                throw ServiceError.reauthRequired
            }
            try stepUp.require(appId: command.appId, uid: user.uid, sessionId: command.sessionId, evenWithoutMFA: true)
        }
        if let identity = command.identity {
            // Only the provider worker's sealed word counts as provider proof.
            do {
                try ProviderAccounts.requireSealed(identity, appId: command.appId, seal: identitySeal)
            } catch {
                throw ServiceError.reauthRequired
            }
        }
        try pool.transaction { connection in
            // The user row first, then its identities, in the order unlinking takes them, so the
            // Apple identity's lock below cannot deadlock with an unlink of the same user.
            guard try users.lock(appId: command.appId, uid: user.uid, on: connection) else {
                throw ServiceError.invalidToken
            }
            if let secret = command.secret {
                guard try users.guestSecretMatches(appId: command.appId, uid: user.uid, secretHMAC: guests.hmac(secret),
                                                   on: connection) else { throw ServiceError.reauthRequired }
            }
            if let identity = command.identity {
                guard let linked = try identities.identity(appId: command.appId, uid: user.uid, provider: identity.provider,
                                                           on: connection),
                      linked.subject == identity.subject else { throw ServiceError.reauthRequired }
                do {
                    try ProviderAccounts.spendNonce(identity, appId: command.appId, nonces: nonces, on: connection)
                } catch let error as ServiceError where error.status == 401 {
                    throw ServiceError.reauthRequired  // a spent nonce is stale proof, not a bad token
                }
            }
            try erase(appId: command.appId, uid: user.uid, email: user.email, proof: command, on: connection)
        }
        return TokenV1.Done()
    }

    /// `DELETE /v1/admin/users/{uid}`: the app's backend (its secret key) is the proof. The
    /// same erasure as `DELETE /v1/me`, Apple revocation included (with the token kept at
    /// sign-in; there is no fresh authorization code). False: no such user.
    func deleteByAdmin(appId: String, uid: String) throws -> Bool {
        try pool.transaction { connection in
            guard try users.lock(appId: appId, uid: uid, on: connection),
                  let user = try users.find(appId: appId, uid: uid, on: connection) else { return false }
            try erase(appId: appId, uid: uid, email: user.email, proof: nil, on: connection)
            return true
        }
    }

    /// Apple says the user deleted their Apple ID, and Apple was the account's only way in: the
    /// same erasure, in the caller's transaction, the user locked by it.
    func eraseForApple(appId: String, uid: String, email: String?, on connection: PGConnection) throws {
        try erase(appId: appId, uid: uid, email: email, proof: nil, on: connection)
    }

    /// Everything of a locked user, in the caller's transaction: Apple revocation queued,
    /// sessions ended (events, devices), codes and rows deleted, `user.deleted`.
    private func erase(appId: String, uid: String, email: String?, proof: TokenV1.DeleteAccount?,
                       on connection: PGConnection) throws {
        if let apple = try identities.identity(appId: appId, uid: uid, provider: "apple", lock: true, on: connection) {
            try queueAppleRevocation(apple, appId: appId, proof: proof, on: connection)
        }
        _ = try sessions.end(appId: appId, uid: uid, sessionId: nil, reason: "account_deleted", on: connection)
        if let email {
            try connection.query("DELETE FROM verification_codes WHERE app_id = $1 AND email_lower = lower($2)",
                                 [appId, email])
        }
        try users.delete(appId: appId, uid: uid, on: connection)
        try Events.userDeleted(appId: appId, uid: uid, on: connection)
    }

    /// The App Store requires revoking the user's Apple tokens at deletion.
    private func queueAppleRevocation(_ apple: IdentityStore.Linked, appId: String, proof command: TokenV1.DeleteAccount?,
                                      on connection: PGConnection) throws {
        var sealedCode: [UInt8] = []
        if let command, let code = command.authorizationCode, !code.isEmpty, command.identity?.provider == "apple" {
            sealedCode = try SecretSealer(masterKey: masterKey, purpose: .busSecretSeal)
                .seal(Array(code.utf8), associatedData: ProviderSecretAAD.appleCode(appId: command.appId, subject: apple.subject))
        }
        guard apple.sealedAppleRefreshToken != nil || !sealedCode.isEmpty else { return }
        let clientId = apple.appleClientId ?? command?.identity?.audience ?? ""
        let revoke = RevocationV1.RevokeAppleToken(appId: appId, subject: apple.subject, clientId: clientId,
                                                   sealedRefreshToken: Data(apple.sealedAppleRefreshToken ?? []),
                                                   sealedCode: Data(sealedCode))
        try EventOutbox.appendCommand(revoke, queue: BusTopology.revocationCommands, appId: appId, on: connection)
    }
}
