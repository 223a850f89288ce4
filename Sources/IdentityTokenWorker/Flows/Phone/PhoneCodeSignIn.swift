import IdentityCredentials
import IdentityKit

/// Phone sign-in and phone linking with a 6-digit code sent by SMS (docs/api-contract.md,
/// "Sign-in methods": phone code; docs/flows.md, "Phone sign-in and SMS").
/// The code rules are the email codes' own (`VerificationCodeStore`: a keyed hash, 10 minutes,
/// single use, 5 guesses a code and the per-target budget), with the E.164 number as the
/// target; a code is reached by the session id the send answered.
struct PhoneCodeSignIn: Sendable {
    let pool: PGPool
    let users: UserStore
    let phones: UserPhoneStore
    let outcome: SignInOutcome
    let settings: CodeSettings
    let policy: SmsPolicy

    /// Stores a new code (replacing the number's older one) and queues its SMS, unless the SMS
    /// policy refuses: then nothing is stored or sent, and the answer is the same, with a
    /// session id that leads nowhere, so a caller learns nothing of the policy.
    func send(_ command: TokenV1.SendPhoneCode, _ context: CommandContext) throws -> CommandConsumer.Reply {
        guard let phone = PhoneNumber.normalize(command.phone) else { throw ServiceError.invalidPhoneNumber() }
        let linking = !(command.uid ?? "").isEmpty
        let purpose: VerificationCodeStore.Purpose = linking ? .phoneLink : .phoneCode
        let sessionId = Identifiers.secret("phs")
        let code = VerificationCodeStore.newCode()
        let allowed = try pool.transaction { connection -> (sent: Bool, locale: String?) in
            // Linking is a signed-in user's: it is counted apart from anonymous sign-in sends.
            guard try policy.refusal(appId: command.appId, phone: phone, ip: command.client?.ip ?? "",
                                     lane: linking ? .authenticated : .anonymous, on: connection) == nil
            else { return (false, nil) }
            try settings.codes.store(code, purpose: purpose, appId: command.appId, email: phone,
                                     lifetimeSeconds: settings.lifetimeSeconds, sessionId: sessionId,
                                     uid: linking ? command.uid : nil, on: connection)
            let locale = linking ? try users.locale(appId: command.appId, uid: command.uid ?? "", on: connection)
                                 : try users.locale(appId: command.appId, verifiedPhone: phone, on: connection)
            return (true, locale)
        }
        let reply = try CommandConsumer.Reply(TokenV1.PhoneCodeSent(sessionId: sessionId,
                                                                    expiresIn: Int32(settings.lifetimeSeconds)))
        guard allowed.sent else { return reply }
        return reply.with(try SmsRequest.code(code, kind: purpose, to: phone, appId: command.appId,
                                              languages: MessageLanguages.preferences(locale: allowed.locale, request: context.languages),
                                              requestId: context.requestId, seal: settings.mailSeal))
    }

    /// Spends the code and signs in, creating the account when no account has verified the
    /// number; a guest's token makes the guest that account.
    func verify(_ command: TokenV1.VerifyPhoneCode, _ context: CommandContext) throws -> TokenV1.AuthResult {
        if let replay = try outcome.replay(context, appId: command.appId, users: users) { return replay }
        let signingKey = try outcome.signingKey(appId: command.appId)
        let checked = try pool.transaction { connection -> Result<(UserRecord, SignInOutcome.Decision, Bool), ServiceError> in
            guard let phone = try settings.codes.target(sessionId: command.phoneSessionId, purpose: .phoneCode,
                                                        appId: command.appId, on: connection)?.target else {
                return .failure(.invalidCode)
            }
            let check = try settings.codes.check(command.code, purpose: .phoneCode, appId: command.appId,
                                                 email: phone, spend: true, on: connection)
            if let failure = check.failure { return .failure(failure) }
            var created = false
            var user: UserRecord
            let existing = try phones.find(appId: command.appId, phone: phone, on: connection)
            if let guest = try GuestUpgrade.guest(command.guestUid, appId: command.appId, users: users, on: connection) {
                // The number is another account's: everything rolls back, the code's spend
                // included, so the same code then signs in to that account.
                guard existing == nil else { throw ServiceError.accountExists }
                var upgrade = UserStore.Upgrade()
                upgrade.firstName = command.firstName
                upgrade.lastName = command.lastName
                _ = try GuestUpgrade.apply(upgrade, to: guest, users: users, on: connection)
                user = try setPhone(phone, uid: guest.uid, appId: command.appId, on: connection)
            } else if let existing {
                guard !existing.disabled else { return .failure(.userDisabled) }
                user = existing
            } else {
                var new = UserStore.NewUser(email: nil, username: nil, firstName: command.firstName,
                                            lastName: command.lastName, passwordHash: nil)
                new.phone = phone
                let described = new
                new.phone = nil  // set by setPhone, with its own rules
                let inserted = try outcome.issuer.hooks.createAccount(appId: command.appId, method: "phone", new: described,
                                                                      ip: command.client?.ip, on: connection) {
                    try users.insert(new, appId: command.appId, on: connection)
                }
                user = try setPhone(phone, uid: inserted.uid, appId: command.appId, on: connection)
                try Events.userCreated(appId: command.appId, uid: user.uid, email: nil, on: connection)
                created = true
            }
            return .success((user, try outcome.decide(for: user, by: .phoneCode, client: command.client, command: context,
                                                      createdAccount: created, on: connection), created))
        }
        let (user, decision, created) = try checked.get()
        return try outcome.answer(decision, for: user, isNewUser: created, signingKey: signingKey)
    }

    /// Spends a link code and makes its number the signed-in user's verified phone. The code
    /// must have been asked for by this user (`POST /v1/me/phone`).
    func link(_ command: TokenV1.LinkPhone) throws -> TokenV1.UserResult {
        let result = try pool.transaction { connection -> Result<UserRecord, ServiceError> in
            guard let target = try settings.codes.target(sessionId: command.phoneSessionId, purpose: .phoneLink,
                                                         appId: command.appId, on: connection),
                  target.uid == command.uid else { return .failure(.invalidCode) }
            let check = try settings.codes.check(command.code, purpose: .phoneLink, appId: command.appId,
                                                 email: target.target, spend: true, on: connection)
            if let failure = check.failure { return .failure(failure) }
            let user = try setPhone(target.target, uid: command.uid, appId: command.appId, on: connection)
            try Events.userUpdated(appId: command.appId, uid: command.uid, change: "phone", on: connection)
            try SecurityAlerts().raise(.phoneChanged, appId: command.appId, uid: command.uid,
                                       context: .init(sessionId: command.sessionId), on: connection)
            return .success(user)
        }
        return TokenV1.UserResult(user: try result.get().message)
    }

    private func setPhone(_ phone: String, uid: String, appId: String, on connection: PGConnection) throws -> UserRecord {
        do {
            return try phones.setVerified(appId: appId, uid: uid, phone: phone, on: connection)
        } catch UserPhoneStore.Conflict.phone {
            throw ServiceError.phoneAlreadyInUse
        }
    }
}
