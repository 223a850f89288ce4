import Foundation
import IdentityCredentials
import IdentityKit

/// Checks second-factor codes (TOTP, the email and SMS factors' codes, backup codes) for a user,
/// inside the caller's transaction. Every check is charged first to the user's budget of wrong
/// codes across challenges (`mfa_guess_per_user`, separate from password limits) and given
/// back when right, like mailed codes are charged to their address.
struct SecondFactors: Sendable {
    let store: MfaStore
    let totpSeal: TOTPSecretSeal
    /// Keys the backup codes' salted HMACs (a token-worker sub-key): a leaked table cannot be
    /// searched offline (`BackupCodeHash`).
    let backupCodeKey: [UInt8]
    let codes: VerificationCodeStore
    let mailSeal: MailPayloadSeal
    let codeLifetimeSeconds: Int
    /// Where the SMS factor's codes go: the account's verified phone.
    let phones: UserPhoneStore
    /// Phone sign-in's SMS-pumping protection, applied to every SMS-factor code too, in the
    /// authenticated lane (`SmsLane`): anonymous sends cannot stop these codes.
    let smsPolicy: SmsPolicy

    enum Check {
        /// Right: the `amr` value of the factor that answered.
        case accepted(amr: String, method: String)
        case rejected
        case limited([RateLimitStore.Status])
    }

    /// The `amr` a second factor adds: every one of them (TOTP, a mailed or texted code, a backup code)
    /// is a one-time code, RFC 8176's `otp`.
    static func amr(of method: String) -> String { "otp" }

    /// Checks `code` against the methods in `allowed` (all of the user's when nil). `method`
    /// narrows it to one; otherwise the code's shape picks (6 digits: TOTP, then the email
    /// code, then the SMS code; anything else: a backup code). `confirming` accepts a factor that
    /// is not on yet (enrolment's first code). A backup code that leaves few raises the
    /// "backup codes low" alert, unless `alertingLowBackupCodes` is false (turning MFA off,
    /// which removes every code: the alert would ask the user to renew codes that are gone).
    /// A TOTP code that was right but already used is refused like a wrong one, and audited and
    /// alerted besides (`reusedTOTP`); `alertContext` is what that alert says of the caller.
    func check(_ rawCode: String, method: String?, allowed: [String], user: UserRecord, confirming: Bool = false,
               alertingLowBackupCodes: Bool = true, alertContext: SecurityAlerts.Context = .init(),
               on connection: PGConnection) throws -> Check {
        let budget = RateLimitStore.Check(RateLimitCatalogue.mfaGuessPerUser, subject: RateLimitStore.hashedSubject(user.uid))
        let statuses = try RateLimitStore.take(appId: user.appId, [budget], on: connection)
        if let last = statuses.last, last.refused { return .limited(statuses) }
        let code = rawCode.trimmingCharacters(in: .whitespaces)
        let sixDigits = code.utf8.count == 6 && code.utf8.allSatisfy { $0 >= 48 && $0 <= 57 }
        var candidates = allowed
        if let method { candidates = candidates.filter { $0 == method } }
        for candidate in candidates {
            let right: Bool
            switch candidate {
            case "totp" where sixDigits:
                right = try totp(code, user: user, confirming: confirming, alertContext: alertContext, on: connection)
            case "email" where sixDigits:
                right = try email(code, user: user, on: connection)
            case "sms" where sixDigits:
                right = try sms(code, user: user, on: connection)
            case "backup_code" where !sixDigits || method == "backup_code":
                right = try spendBackupCode(code, user: user, on: connection)
                if right, alertingLowBackupCodes,
                   try store.status(appId: user.appId, uid: user.uid, on: connection).backupCodesRemaining
                    <= SecurityAlerts.backupCodesLowThreshold {
                    try SecurityAlerts().raise(.backupCodesLow, appId: user.appId, uid: user.uid, context: .init(),
                                               on: connection)
                }
            default:
                right = false
            }
            if right {
                try RateLimitStore.refund(appId: user.appId, budget, on: connection)
                return .accepted(amr: Self.amr(of: candidate), method: candidate)
            }
        }
        return .rejected
    }

    /// A TOTP code within ±1 step whose step is later than the last one accepted: the step is
    /// then recorded by one conditional UPDATE, so the same code never passes twice. A code of
    /// the last accepted step or an earlier one (within ±1 step of now) of a factor that is on
    /// is a replay: someone saw or intercepted a code the owner used (ASVS 2.8.5).
    private func totp(_ code: String, user: UserRecord, confirming: Bool, alertContext: SecurityAlerts.Context,
                      on connection: PGConnection) throws -> Bool {
        guard let stored = try store.totp(appId: user.appId, uid: user.uid, on: connection),
              stored.confirmed || confirming else { return false }
        let secret = try totpSeal.open(stored.sealed, appId: user.appId, uid: user.uid)
        guard let step = TOTP.matchingStep(code, secret: secret, now: Timestamp.nowSeconds()) else { return false }
        if try store.acceptTOTPStep(step, appId: user.appId, uid: user.uid, confirming: confirming, on: connection) {
            return true
        }
        if stored.confirmed { try reusedTOTP(step: step, user: user, alertContext: alertContext, on: connection) }
        return false
    }

    /// A reused TOTP code: refused by the caller as any wrong code is (same answer, same count
    /// against the budgets), and besides an audit row (`mfa.totp_code_reused`), a warning and the
    /// `mfa_code_reused` alert to the owner, all in the check's transaction, which commits for a
    /// refusal too. Each costs one of the user's wrong-code budget (`mfa_guess_per_user`, 20 an
    /// hour by default) like any wrong code, so a replayer cannot flood the mailbox.
    private func reusedTOTP(step: Int64, user: UserRecord, alertContext: SecurityAlerts.Context,
                            on connection: PGConnection) throws {
        try AuditLog.append(appId: user.appId, AuditLog.Entry(
            actor: "system", action: "mfa.totp_code_reused", target: "user:" + user.uid,
            ip: alertContext.ip.isEmpty ? nil : alertContext.ip,
            detail: .object(["method": .string("totp"), "step": JSONValue(Int(step))])), on: connection)
        Log.warning("reused TOTP code refused: audited and alerted", ["app_id": user.appId])
        try SecurityAlerts().raise(.mfaCodeReused, appId: user.appId, uid: user.uid, context: alertContext,
                                   on: connection)
    }

    /// The email factor's mailed code (spent when right).
    private func email(_ code: String, user: UserRecord, on connection: PGConnection) throws -> Bool {
        guard let address = user.email else { return false }
        return try codes.check(code, purpose: .mfaEmail, appId: user.appId, email: address, spend: true,
                               on: connection) == .valid
    }

    /// The SMS factor's texted code (spent when right), kept under the verified phone it went to.
    private func sms(_ code: String, user: UserRecord, on connection: PGConnection) throws -> Bool {
        guard let phone = try phones.verified(appId: user.appId, uid: user.uid, on: connection) else { return false }
        return try codes.check(code, purpose: .mfaSms, appId: user.appId, email: phone, spend: true,
                               on: connection) == .valid
    }

    // MARK: Backup codes

    /// A fresh set of backup codes (shown once) and their salted HMACs (stored): 10 codes of 10
    /// characters from an alphabet without look-alikes (50 bits each), so each is stored under a
    /// salt of its own (`BackupCodeHash`).
    func newBackupCodes() -> (codes: [String], hashes: [BackupCodeHash]) {
        let alphabet = Array("abcdefghjkmnpqrstuvwxyz23456789")
        var codes: [String] = []
        while codes.count < MfaStore.backupCodeCount {
            var code = ""
            while code.count < 10 {
                let byte = SecureRandom.bytes(1)[0]
                guard byte < 248 else { continue }  // 248 = 8 × 31: no modulo bias
                code.append(alphabet[Int(byte) % alphabet.count])
            }
            codes.append(String(code.prefix(5)) + "-" + String(code.suffix(5)))
        }
        return (codes, codes.map { BackupCodeHash.make($0, key: backupCodeKey) })
    }

    /// Each unspent code has its own salt, so the typed code is hashed under each and compared
    /// (every row, whichever matches: the time does not tell which); the matching row is then
    /// spent by one conditional UPDATE, which parallel uses of one code race for.
    private func spendBackupCode(_ code: String, user: UserRecord, on connection: PGConnection) throws -> Bool {
        var match: BackupCodeHash?
        for stored in try store.unspentBackupCodes(appId: user.appId, uid: user.uid, on: connection)
        where stored.matches(code, key: backupCodeKey) {
            match = stored
        }
        guard let match else { return false }
        return try store.spendBackupCode(match.hmac, appId: user.appId, uid: user.uid, on: connection)
    }

    /// Stores a fresh email-factor code and queues its mail through the outbox (sent exactly
    /// when the transaction commits; the code travels sealed for the mailer).
    func mailCode(to user: UserRecord, on connection: PGConnection) throws {
        guard let address = user.email else { return }
        let code = VerificationCodeStore.newCode()
        try codes.store(code, purpose: .mfaEmail, appId: user.appId, email: address, lifetimeSeconds: codeLifetimeSeconds,
                        on: connection)
        // The user's locale only: the request that asked for the code is not the account's word.
        let command = try MailRequest.command(code, kind: MailKind.mfaCode.name, to: address, appId: user.appId,
                                              languages: MessageLanguages.preferences(locale: user.locale, request: []),
                                              seal: mailSeal)
        try EventOutbox.appendCommand(command, queue: DeliveryChannel.email.queue, appId: user.appId, on: connection)
    }

    /// Stores a fresh SMS-factor code and queues its SMS through the outbox, as `mailCode` does,
    /// to the account's verified phone. Phone sign-in's SMS policy applies first (the app's
    /// allowed calling codes, the authenticated lane's breaker and per-app, per-IP and
    /// per-number caps: only an account holder reaches here, a session or the password): a refusal
    /// stores and sends nothing and is answered like a send (the caller cannot tell), as for
    /// phone sign-in; the user's previous code, if any, stays valid.
    func textCode(to user: UserRecord, ip: String, on connection: PGConnection) throws {
        guard let phone = try phones.verified(appId: user.appId, uid: user.uid, on: connection),
              try smsPolicy.refusal(appId: user.appId, phone: phone, ip: ip, lane: .authenticated,
                                   on: connection) == nil else { return }
        let code = VerificationCodeStore.newCode()
        try codes.store(code, purpose: .mfaSms, appId: user.appId, email: phone, lifetimeSeconds: codeLifetimeSeconds,
                        on: connection)
        let command = try SmsRequest.command(code, kind: .mfaSms, to: phone, appId: user.appId,
                                             languages: MessageLanguages.preferences(locale: user.locale, request: []),
                                             seal: mailSeal)
        try EventOutbox.appendCommand(command, queue: DeliveryChannel.sms.queue, appId: user.appId, on: connection)
    }
}
