import IdentityCredentials
import IdentityKit

/// Passwordless sign-in with a 6-digit code mailed to the address (docs/api-contract.md,
/// "Sign-in methods": email code).
struct EmailCodeSignIn: Sendable {
    let pool: PGPool
    let users: UserStore
    let outcome: SignInOutcome
    let settings: CodeSettings
    let ownership: EmailOwnership

    /// Stores a new code (replacing any older one) and mails it, whether or not the email has
    /// an account: the answer and the work are the same either way.
    func send(_ command: TokenV1.SendEmailCode, _ context: CommandContext) throws -> CommandConsumer.Reply {
        guard EmailAddress.isValid(command.email) else { throw ServiceError.invalidEmail() }
        let code = VerificationCodeStore.newCode()
        let locale = try pool.transaction { connection -> String? in
            try settings.codes.store(code, purpose: .emailCode, appId: command.appId, email: command.email,
                                     lifetimeSeconds: settings.lifetimeSeconds, on: connection)
            return try users.locale(appId: command.appId, email: command.email, on: connection)
        }
        return try CommandConsumer.Reply(TokenV1.Accepted(expiresIn: Int32(settings.lifetimeSeconds)))
            .with(MailRequest.code(code, kind: .emailCode, to: command.email, appId: command.appId,
                                   languages: MessageLanguages.preferences(locale: locale, request: context.languages),
                                   requestId: context.requestId, seal: settings.mailSeal))
    }

    /// Spends the code and signs in, creating the account when there is none; the email
    /// counts as verified from now on.
    func verify(_ command: TokenV1.VerifyEmailCode, _ context: CommandContext) throws -> TokenV1.AuthResult {
        if let replay = try outcome.replay(context, appId: command.appId, users: users) { return replay }
        let signingKey = try outcome.signingKey(appId: command.appId)
        let checked = try pool.transaction { connection -> Result<(UserRecord, SignInOutcome.Decision, Bool), ServiceError> in
            let check = try settings.codes.check(command.code, purpose: .emailCode, appId: command.appId,
                                                 email: command.email, spend: true, on: connection)
            if let failure = check.failure { return .failure(failure) }
            var created = false
            var user: UserRecord
            let existing = try users.find(appId: command.appId, email: command.email, on: connection)
            let guest = try GuestUpgrade.guest(command.guestUid, appId: command.appId, users: users, on: connection)
            if let guest {
                // The email belongs to another account: the whole transaction, the code's
                // spend included, rolls back, so the same code then signs in to that account.
                guard existing == nil else { throw ServiceError.accountExists }
                var upgrade = UserStore.Upgrade()
                upgrade.email = command.email
                upgrade.emailVerified = true
                upgrade.firstName = command.firstName
                upgrade.lastName = command.lastName
                user = try GuestUpgrade.apply(upgrade, to: guest, users: users, on: connection)
            } else if let existing {
                guard !existing.disabled else { return .failure(.userDisabled) }
                // The first proof of the address: whoever registered it before keeps nothing.
                try ownership.proved(existing, appId: command.appId, on: connection)
                user = try users.find(appId: command.appId, uid: existing.uid, on: connection) ?? existing
            } else {
                var new = UserStore.NewUser(email: command.email, username: nil, firstName: command.firstName,
                                            lastName: command.lastName, passwordHash: nil)
                new.emailVerified = true
                user = try outcome.issuer.hooks.createAccount(appId: command.appId, method: "email_code", new: new,
                                                              ip: command.client?.ip, on: connection) {
                    try users.insert(new, appId: command.appId, on: connection)
                }
                try Events.userCreated(appId: command.appId, uid: user.uid, email: user.email, on: connection)
                created = true
            }
            return .success((user, try outcome.decide(for: user, by: .emailCode, client: command.client, command: context,
                                                      createdAccount: created, on: connection), created))
        }
        let (user, decision, created) = try checked.get()
        return try outcome.answer(decision, for: user, isNewUser: created, signingKey: signingKey)
    }
}
