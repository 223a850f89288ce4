import IdentityCredentials
import IdentityKit

/// Forgotten and changed passwords (docs/api-contract.md, "Account"). A reset ends every session
/// and a change every other session, in the same transaction as the new hash: there is no moment
/// when the new password is set and an old session still refreshes. (The ending is the same
/// `SessionStore.end` the revocation worker runs, with its `session.revoked` events.)
struct PasswordRecovery: Sendable {
    let pool: PGPool
    let users: UserStore
    let sessions: SessionStore
    let hasher: PasswordHasher
    let settings: CodeSettings
    let ownership: EmailOwnership

    /// Mails a reset code when the email has an account; answers the same either way.
    func forgot(_ command: TokenV1.ForgotPassword, _ context: CommandContext) throws -> CommandConsumer.Reply {
        let accepted = try CommandConsumer.Reply(TokenV1.Accepted(expiresIn: Int32(settings.lifetimeSeconds)))
        guard EmailAddress.isValid(command.email) else { return accepted }
        let code = VerificationCodeStore.newCode()
        let known = try pool.transaction { connection -> UserRecord? in
            guard let user = try users.find(appId: command.appId, email: command.email, on: connection) else { return nil }
            try settings.codes.store(code, purpose: .passwordReset, appId: command.appId, email: command.email,
                                     lifetimeSeconds: settings.lifetimeSeconds, on: connection)
            return user
        }
        guard let known else { return accepted }
        return accepted.with(try MailRequest.code(code, kind: .passwordReset, to: command.email, appId: command.appId,
                                                  languages: MessageLanguages.preferences(locale: known.locale, request: context.languages),
                                                  requestId: context.requestId, seal: settings.mailSeal))
    }

    /// Tells whether a code is right without spending it (wrong guesses still count).
    func check(_ command: TokenV1.CheckPasswordCode) throws -> TokenV1.CodeCheck {
        let check = try pool.transaction { connection in
            try settings.codes.check(command.code, purpose: .passwordReset, appId: command.appId, email: command.email,
                                     spend: false, on: connection)
        }
        if case .limited = check, let failure = check.failure { throw failure }
        return TokenV1.CodeCheck(valid: check == .valid)
    }

    func reset(_ command: TokenV1.ResetPassword) throws -> TokenV1.Done {
        if let problem = PasswordPolicy.problem(with: command.password) { throw ServiceError.weakPassword(problem) }
        let failure = try pool.transaction { connection -> ServiceError? in
            let check = try settings.codes.check(command.code, purpose: .passwordReset, appId: command.appId,
                                                 email: command.email, spend: true, on: connection)
            if let failure = check.failure { return failure }
            guard let user = try users.find(appId: command.appId, email: command.email, on: connection) else {
                return .invalidCode
            }
            // Hashed only once the code is right: a wrong guess must not buy Argon2 work. The
            // code's row stays locked meanwhile, so a parallel guess waits for this answer.
            let hash = try hasher.hash(command.password)
            // Receiving the code proved the address: on an unverified account, the provider
            // links set before the proof go too (the password is replaced just below).
            try ownership.proved(user, appId: command.appId, on: connection)
            try users.setPassword(appId: command.appId, uid: user.uid, hash: hash, on: connection)
            try users.markEmailVerified(appId: command.appId, uid: user.uid, on: connection)
            // Before the sessions end: their devices are who must hear of it.
            try SecurityAlerts().raise(.passwordChanged, appId: command.appId, uid: user.uid, context: .init(),
                                       on: connection)
            _ = try sessions.end(appId: command.appId, uid: user.uid, sessionId: nil, reason: "password_reset",
                                 on: connection)
            return nil
        }
        if let failure { throw failure }
        return TokenV1.Done()
    }

    func change(_ command: TokenV1.ChangePassword) throws -> TokenV1.Done {
        guard let user = try users.find(appId: command.appId, uid: command.uid), let current = user.passwordHash,
              command.currentPassword.unicodeScalars.count <= PasswordPolicy.maximumLength,
              hasher.verifyStored(command.currentPassword, against: current)
        else {
            throw ServiceError.invalidCredential
        }
        if let problem = PasswordPolicy.problem(with: command.newPassword) { throw ServiceError.weakPassword(problem) }
        let hash = try hasher.hash(command.newPassword)
        try pool.transaction { connection in
            try users.setPassword(appId: command.appId, uid: user.uid, hash: hash, on: connection)
            // Before the other sessions end: their devices are who must hear of it.
            try SecurityAlerts().raise(.passwordChanged, appId: command.appId, uid: user.uid,
                                       context: .init(sessionId: command.sessionId), on: connection)
            _ = try sessions.end(appId: command.appId, uid: user.uid, sessionId: nil, except: command.sessionId,
                                 reason: "password_changed", on: connection)
        }
        return TokenV1.Done()
    }
}
