import IdentityCredentials
import IdentityKit

/// Proving a signed-in user's email address with a mailed code, at most one send a minute.
struct EmailVerification: Sendable {
    let pool: PGPool
    let users: UserStore
    let settings: CodeSettings
    let ownership: EmailOwnership

    func send(_ command: TokenV1.SendEmailVerification, _ context: CommandContext) throws -> CommandConsumer.Reply {
        guard let user = try users.find(appId: command.appId, uid: command.uid) else { throw ServiceError.invalidToken }
        guard let email = user.email else {
            throw ServiceError.validationFailed([.init(location: "user.email", message: "the account has no email address")])
        }
        let code = VerificationCodeStore.newCode()
        try pool.transaction { connection in
            // The cooldown is read and the new code written under the same row lock, so two
            // parallel sends cannot both pass it.
            guard try users.lock(appId: command.appId, uid: user.uid, on: connection) else { throw ServiceError.invalidToken }
            if let age = try settings.codes.secondsSinceLastSend(purpose: .emailVerification, appId: command.appId,
                                                                 email: email, on: connection),
               age < settings.verificationCooldownSeconds {
                throw ServiceError.rateLimited(retryAfter: settings.verificationCooldownSeconds - age)
            }
            try settings.codes.store(code, purpose: .emailVerification, appId: command.appId, email: email,
                                     lifetimeSeconds: settings.lifetimeSeconds, on: connection)
        }
        return try CommandConsumer.Reply(TokenV1.Accepted(expiresIn: Int32(settings.lifetimeSeconds)))
            .with(MailRequest.code(code, kind: .emailVerification, to: email, appId: command.appId,
                                   languages: MessageLanguages.preferences(locale: user.locale, request: context.languages),
                                   requestId: context.requestId, seal: settings.mailSeal))
    }

    func verify(_ command: TokenV1.VerifyEmail) throws -> TokenV1.UserResult {
        let outcome = try pool.transaction { connection -> Result<UserRecord, ServiceError> in
            let check = try settings.codes.check(command.code, purpose: .emailVerification, appId: command.appId,
                                                 email: command.email, spend: true, on: connection)
            if let failure = check.failure { return .failure(failure) }
            guard let user = try users.find(appId: command.appId, email: command.email, on: connection) else {
                return .failure(.invalidCode)
            }
            if let sessionId = command.sessionId, !sessionId.isEmpty, command.uid == user.uid {
                // Proved in the account's own session (its token checked by CallerAuthority): the
                // holder of the session reads the mailbox, so what they set stays; any other
                // session ends.
                try ownership.provedInSession(user, appId: command.appId, sessionId: sessionId, on: connection)
            } else {
                try ownership.proved(user, appId: command.appId, on: connection)
            }
            try users.markEmailVerified(appId: command.appId, uid: user.uid, on: connection)
            return .success(try users.find(appId: command.appId, uid: user.uid, on: connection) ?? user)
        }
        return TokenV1.UserResult(user: try outcome.get().message)
    }
}
