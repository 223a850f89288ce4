import IdentityCredentials
import IdentityKit

/// `identity.token.v1.SignIn`: email or username with a password. An unknown account, an
/// account without a password and a wrong password all cost one Argon2id check and all answer
/// `auth/invalid-credential`, so neither the answer nor its timing tells which it was. A sign-in
/// that starts a session answers with a new device token too (`SignInDevices`).
struct PasswordSignIn: Sendable {
    let pool: PGPool
    let users: UserStore
    let hasher: PasswordHasher
    let outcome: SignInOutcome
    let failures: SignInFailureAudit
    let devices: SignInDevices

    func handle(_ command: TokenV1.SignIn, _ context: CommandContext) throws -> TokenV1.AuthResult {
        if var replay = try outcome.replay(context, appId: command.appId, users: users) {
            if replay.mfa == nil, let uid = replay.user?.uid {
                replay.deviceToken = try devices.replayed(appId: command.appId, uid: uid, command: context)
            }
            return replay
        }
        guard command.password.unicodeScalars.count <= PasswordPolicy.maximumLength else { throw ServiceError.invalidCredential }
        let found = try users.find(appId: command.appId, identifier: command.identifier)
        guard let user = found, let hash = user.passwordHash else {
            hasher.verifyDecoyPadded(command.password)
            failures.note(appId: command.appId, uid: nil, method: "password", ip: command.client?.ip,
                          requestId: context.requestId)
            throw ServiceError.invalidCredential
        }
        guard hasher.verifyStored(command.password, against: hash) else {
            failures.note(appId: command.appId, uid: user.uid, method: "password", ip: command.client?.ip,
                          requestId: context.requestId)
            throw ServiceError.invalidCredential
        }
        // Told only to someone who knows the password, so it reveals nothing to a guesser.
        guard !user.disabled else { throw ServiceError.userDisabled }
        let signingKey = try outcome.signingKey(appId: command.appId)
        // An imported hash (bcrypt, scrypt, PBKDF2…) or an Argon2id of another cost is replaced
        // by the service's own, hashed before the transaction so no row lock waits on Argon2.
        let rehashed = hasher.needsRehash(hash) ? try hasher.hash(command.password) : nil
        let (decision, deviceToken) = try pool.transaction { connection in
            if let rehashed {
                // Only if the hash is still the one just checked: a password changed meanwhile wins.
                try users.replacePasswordHash(appId: user.appId, uid: user.uid, expected: hash, with: rehashed,
                                              on: connection)
            }
            let decision = try outcome.decide(for: user, by: .password, client: command.client, command: context,
                                              createdAccount: false, on: connection)
            // Only a sign-in that ends in a session: an MFA challenge proves the password alone.
            guard case .session = decision else { return (decision, "") }
            return (decision, try devices.issue(for: user, presented: command.deviceToken, command: context, on: connection))
        }
        var answer = try outcome.answer(decision, for: user, isNewUser: false, signingKey: signingKey)
        answer.deviceToken = deviceToken
        return answer
    }
}
