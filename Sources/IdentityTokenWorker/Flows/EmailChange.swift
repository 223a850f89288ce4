import IdentityCredentials
import IdentityKit

/// A signed-in user's new email address (`POST /v1/me/email/change` + `/confirm`). The address
/// is a way in (sign-in codes, password recovery, alerts), so the change starts from a fresh
/// sign-in (BEARER_FRESH, checked before this flow) and takes effect only once the code mailed
/// to the new address comes back from the same user. The old address keeps working until then
/// and is told afterwards; every other session ends, as for a password change.
struct EmailChange: Sendable {
    let pool: PGPool
    let users: UserStore
    let sessions: SessionStore
    let settings: CodeSettings

    /// Mails a code to the new address, replacing any pending change of this user. The answer
    /// is the same whether or not the address has an account: only its owner learns that, by
    /// confirming (409 `auth/email-already-in-use`).
    func start(_ command: TokenV1.StartEmailChange, _ context: CommandContext) throws -> CommandConsumer.Reply {
        guard EmailAddress.isValid(command.email) else { throw ServiceError.invalidEmail() }
        guard let user = try users.find(appId: command.appId, uid: command.uid) else { throw ServiceError.invalidToken }
        guard !user.isGuest else {
            throw ServiceError.validationFailed([.init(location: "user", message: "a guest has no email address: sign up instead")])
        }
        let code = VerificationCodeStore.newCode()
        try pool.transaction { connection in
            // The cooldown is read and the code written under the user's row lock, so two
            // parallel starts cannot both pass it.
            guard try users.lock(appId: command.appId, uid: user.uid, on: connection) else { throw ServiceError.invalidToken }
            if let age = try settings.codes.secondsSinceLastSend(purpose: .emailChange, appId: command.appId,
                                                                 email: command.email, on: connection),
               age < settings.verificationCooldownSeconds {
                throw ServiceError.rateLimited(retryAfter: settings.verificationCooldownSeconds - age)
            }
            try settings.codes.discard(purpose: .emailChange, appId: command.appId, uid: user.uid, on: connection)
            try settings.codes.store(code, purpose: .emailChange, appId: command.appId, email: command.email,
                                     lifetimeSeconds: settings.lifetimeSeconds, uid: user.uid, on: connection)
        }
        return try CommandConsumer.Reply(TokenV1.Accepted(expiresIn: Int32(settings.lifetimeSeconds)))
            .with(MailRequest.code(code, kind: .emailVerification, to: command.email, appId: command.appId,
                                   languages: MessageLanguages.preferences(locale: user.locale, request: context.languages),
                                   requestId: context.requestId, seal: settings.mailSeal))
    }

    /// Spends the code of the user's pending change and moves the account to its address,
    /// verified. A wrong guess is counted against the address (the transaction commits with
    /// the failure as its result).
    func confirm(_ command: TokenV1.ConfirmEmailChange) throws -> TokenV1.UserResult {
        let outcome = try pool.transaction { connection -> Result<UserRecord, ServiceError> in
            guard let address = try settings.codes.pending(purpose: .emailChange, appId: command.appId, uid: command.uid,
                                                           on: connection) else { return .failure(.invalidCode) }
            let check = try settings.codes.check(command.code, purpose: .emailChange, appId: command.appId,
                                                 email: address, spend: true, on: connection)
            if let failure = check.failure { return .failure(failure) }
            guard try users.lock(appId: command.appId, uid: command.uid, on: connection),
                  let before = try users.find(appId: command.appId, uid: command.uid, on: connection)
            else { return .failure(.invalidToken) }
            if let holder = try users.find(appId: command.appId, email: address, on: connection), holder.uid != command.uid {
                return .failure(.emailAlreadyInUse)
            }
            var changes = UserAdminStore.Changes()
            changes.email = address
            changes.emailVerified = true
            let updated: UserRecord?
            do {
                updated = try UserAdminStore.update(appId: command.appId, uid: command.uid, changes, on: connection)
            } catch UserStore.Conflict.email {
                return .failure(.emailAlreadyInUse)
            }
            guard let user = updated else { return .failure(.invalidToken) }
            if let previous = before.email, previous.lowercased() != address {
                // To the address it was changed from: its owner is who must hear of it.
                try SecurityAlerts().raise(.emailChanged, appId: command.appId, uid: user.uid,
                                           context: .init(sessionId: command.sessionId), address: previous, on: connection)
            }
            _ = try sessions.end(appId: command.appId, uid: user.uid, sessionId: nil, except: command.sessionId,
                                 reason: "email_changed", on: connection)
            try Events.userUpdated(appId: command.appId, uid: user.uid, change: "email", on: connection)
            return .success(user)
        }
        return TokenV1.UserResult(user: try outcome.get().message)
    }
}

/// The email change's commands, handled beside the flow, which is built from the router's stores.
extension CommandRouter {
    private var emailChange: EmailChange {
        EmailChange(pool: stores.pool, users: stores.users, sessions: stores.sessions, settings: stores.codes)
    }

    func handle(_ command: TokenV1.StartEmailChange, _ context: CommandContext) throws -> CommandConsumer.Reply {
        try emailChange.start(command, context)
    }

    func handle(_ command: TokenV1.ConfirmEmailChange, _ context: CommandContext) throws -> CommandConsumer.Reply {
        try .init(emailChange.confirm(command))
    }
}
