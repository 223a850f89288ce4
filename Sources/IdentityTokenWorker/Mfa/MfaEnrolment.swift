import Foundation
import IdentityCredentials
import IdentityKit

/// The signed-in side of MFA (docs/api-contract.md, "MFA"): enrolment (TOTP or email, confirmed
/// with a first code), status, backup codes, and switching off. Changes need step-up (`StepUp`).
struct MfaEnrolment: Sendable {
    let pool: PGPool
    let users: UserStore
    let apps: AppStore
    let factors: SecondFactors
    let stepUp: StepUp

    private var store: MfaStore { factors.store }

    private func user(_ appId: String, _ uid: String) throws -> UserRecord {
        guard let user = try users.find(appId: appId, uid: uid) else { throw ServiceError.invalidToken }
        guard !user.disabled else { throw ServiceError.userDisabled }
        return user
    }

    /// POST /v1/me/mfa/{totp|email|sms}. TOTP answers the secret, its URI and QR code; email
    /// mails a code and SMS texts one to the verified phone (answered with `Accepted`; once the
    /// factor is on, a current code for `DELETE /v1/me/mfa`).
    func start(_ command: TokenV1.StartMfaEnrolment) throws -> CommandConsumer.Reply {
        guard let method = MfaStore.Method(rawValue: command.method) else { throw ServiceError.notFound }
        let user = try user(command.appId, command.uid)
        // A guest's only credential is its device's secret: there is no sign-in to protect.
        guard !user.isGuest else {
            throw ServiceError.validationFailed([.init(location: "body", message: "guests cannot turn on MFA")])
        }
        if method == .email {
            guard user.email != nil, user.emailVerified else {
                throw ServiceError.validationFailed([.init(location: "email", message: "the account needs a verified email")])
            }
        }
        if method == .sms {
            guard try pool.withConnection({ try factors.phones.verified(appId: user.appId, uid: user.uid, on: $0) }) != nil else {
                throw ServiceError.validationFailed([.init(location: "phone", message: "the account needs a verified phone")])
            }
        }
        switch method {
        case .totp:
            let secret = SecureRandom.bytes(20)  // 160 bits, RFC 4226's recommendation
            let sealed = try factors.totpSeal.seal(secret, appId: user.appId, uid: user.uid)
            let began = try pool.transaction { try store.begin(.totp, appId: user.appId, uid: user.uid, sealedSecret: sealed, on: $0) }
            guard began else { throw ServiceError.mfaAlreadyEnabled }
            let issuer = try apps.find(id: command.appId)?.name ?? "identity"
            let uri = TOTP.uri(secret: secret, issuer: issuer, account: user.email ?? user.username ?? user.uid)
            return try CommandConsumer.Reply(TokenV1.TotpEnrolment(secret: Base32.encode(secret), otpauthUri: uri,
                                                                   qrSvg: try QRCodeSVG.render(uri)))
        default:
            // When the factor is already on, this sends a current code (what switching MFA off
            // asks for) instead of starting over.
            try pool.transaction { connection in
                _ = try store.begin(method, appId: user.appId, uid: user.uid, sealedSecret: nil, on: connection)
                if method == .sms {
                    try factors.textCode(to: user, ip: command.client?.ip ?? "", on: connection)
                } else {
                    try factors.mailCode(to: user, on: connection)
                }
            }
            return try CommandConsumer.Reply(TokenV1.Accepted(expiresIn: Int32(factors.codeLifetimeSeconds)))
        }
    }

    /// POST /v1/me/mfa/{method}/confirm: the first code switches the factor on; the answer is a
    /// fresh set of backup codes (shown this once). The first factor turned on publishes `mfa.enabled`.
    func confirm(_ command: TokenV1.ConfirmMfaEnrolment) throws -> TokenV1.BackupCodes {
        guard let method = MfaStore.Method(rawValue: command.method) else { throw ServiceError.notFound }
        let user = try user(command.appId, command.uid)
        let (codes, hashes) = factors.newBackupCodes()
        let outcome = try pool.transaction { connection -> Result<Void, ServiceError> in
            guard try store.isStarted(method, appId: user.appId, uid: user.uid, on: connection) else {
                return .failure(.invalidCode)
            }
            let wasOn = try !store.confirmedMethods(appId: user.appId, uid: user.uid, on: connection).isEmpty
            switch try factors.check(command.code, method: method.rawValue, allowed: [method.rawValue], user: user,
                                     confirming: true, alertContext: .init(sessionId: command.sessionId),
                                     on: connection) {
            case .limited(let statuses): return .failure(.rateLimited(statuses))
            case .rejected: return .failure(.invalidCode)
            case .accepted:
                if method != .totp {
                    _ = try store.markUsed(method, appId: user.appId, uid: user.uid, confirming: true, on: connection)
                }
            }
            try store.replaceBackupCodes(hashes, appId: user.appId, uid: user.uid, on: connection)
            if !wasOn {
                try Events.mfaEnabled(appId: user.appId, uid: user.uid, method: method.rawValue, on: connection)
            }
            // A second factor added to MFA already on is a new way past it: alerted too.
            try SecurityAlerts().raise(.mfaEnabled, appId: user.appId, uid: user.uid,
                                       context: .init(sessionId: command.sessionId), on: connection)
            return .success(())
        }
        try outcome.get()
        return TokenV1.BackupCodes(backupCodes: codes)
    }

    /// GET /v1/me/mfa.
    func status(_ command: TokenV1.GetMfaStatus) throws -> TokenV1.MfaStatus {
        let status = try pool.withConnection { try store.status(appId: command.appId, uid: command.uid, on: $0) }
        return TokenV1.MfaStatus(enabled: status.enabled, methods: status.methods,
                                 backupCodesRemaining: Int32(status.backupCodesRemaining),
                                 lastUsedAt: status.lastUsedAtMicros.map { Timestamp.rfc3339(microsecondsSinceEpoch: $0) },
                                 enabledAt: status.enabledAtMicros.map { Timestamp.rfc3339(microsecondsSinceEpoch: $0) })
    }

    /// POST /v1/me/mfa/backup-codes: a fresh set; the old one dies.
    func regenerate(_ command: TokenV1.RegenerateBackupCodes) throws -> TokenV1.BackupCodes {
        let user = try user(command.appId, command.uid)
        guard try stepUp.mfaOn(appId: user.appId, uid: user.uid) else { throw ServiceError.notFound }
        let (codes, hashes) = factors.newBackupCodes()
        try pool.transaction { connection in
            try store.replaceBackupCodes(hashes, appId: user.appId, uid: user.uid, on: connection)
            try SecurityAlerts().raise(.backupCodesRenewed, appId: user.appId, uid: user.uid,
                                       context: .init(sessionId: command.sessionId), on: connection)
        }
        return TokenV1.BackupCodes(backupCodes: codes)
    }

    /// DELETE /v1/me/mfa {code}: a current code of any factor (or a backup code) and step-up;
    /// every factor and backup code goes, and `mfa.disabled` is published.
    func disable(_ command: TokenV1.DisableMfa) throws -> TokenV1.Done {
        let user = try user(command.appId, command.uid)
        let outcome = try pool.transaction { connection -> Result<Void, ServiceError> in
            let methods = try store.confirmedMethods(appId: user.appId, uid: user.uid, on: connection).map(\.rawValue)
            guard !methods.isEmpty else { return .failure(.invalidCode) }
            switch try factors.check(command.code, method: nil, allowed: methods + ["backup_code"], user: user,
                                     alertingLowBackupCodes: false, alertContext: .init(sessionId: command.sessionId),
                                     on: connection) {
            case .limited(let statuses): return .failure(.rateLimited(statuses))
            case .rejected: return .failure(.invalidCode)
            case .accepted: break
            }
            _ = try store.removeAll(appId: user.appId, uid: user.uid, on: connection)
            try Events.mfaDisabled(appId: user.appId, uid: user.uid, reason: "user", on: connection)
            try SecurityAlerts().raise(.mfaDisabled, appId: user.appId, uid: user.uid,
                                       context: .init(sessionId: command.sessionId), on: connection)
            return .success(())
        }
        try outcome.get()
        return TokenV1.Done()
    }
}
