import IdentityCredentials
import IdentityKit

/// The one place every first factor ends (docs/architecture.md, "Processes": one sign-in outcome).
/// A flow proves who the user is, then hands the user and what it proved to `decide`, inside
/// its own transaction. `decide` starts the session, recording the assurance reached (`amr`,
/// `aal`) on it, unless the user has a second factor the first one does not already satisfy:
/// then it opens an MFA challenge instead (docs/api-contract.md, "MFA": 202). `answer`, after the
/// commit, turns the decision into the reply. No flow mints tokens itself, so a rule about
/// sign-ins is made here once, for every method present and to come (phone, passkey).
struct SignInOutcome: Sendable {
    let issuer: SessionIssuer
    let factors: MfaStore
    let challenges: MfaChallengeStore
    let secondFactors: SecondFactors
    /// Derives challenge tokens from command ids (like first refresh tokens), so a redelivered
    /// first-factor command is answered with the same challenge.
    let challengeKey: [UInt8]

    /// What the flow's transaction committed.
    enum Decision: Sendable {
        /// A session began: tokens follow.
        case session(SessionIssuer.Started, Assurance)
        /// A second factor is needed first (HTTP 202), after this first factor.
        case challenge(TokenV1.MfaChallenge, Assurance)
    }

    /// Decides, inside the flow's transaction, what this sign-in earns.
    func decide(for user: UserRecord, by firstFactor: Assurance, client: CommonV1.ClientInfo?,
                command: CommandContext, createdAccount: Bool, on connection: PGConnection) throws -> Decision {
        // A first factor that is two by itself (a passkey with user verification) needs no second.
        if firstFactor.aal < 2 {
            let enabled = try factors.confirmedMethods(appId: user.appId, uid: user.uid, on: connection)
            if !enabled.isEmpty {
                return .challenge(try openChallenge(for: user, firstFactor: firstFactor, methods: enabled, client: client,
                                                    command: command, createdAccount: createdAccount, on: connection),
                                  firstFactor)
            }
        }
        return .session(try issuer.start(for: user, assurance: firstFactor, client: client, command: command,
                                         createdAccount: createdAccount, on: connection), firstFactor)
    }

    /// The methods that may answer a challenge after `firstFactor`: a passwordless first factor
    /// never counts as both factors (an email code sign-in cannot be finished by an email code,
    /// nor a phone code sign-in by an SMS code).
    static func challengeMethods(_ enabled: [MfaStore.Method], after firstFactor: Assurance) -> [String] {
        var methods: [String] = []
        for method in enabled {
            switch method {
            case .totp: methods.append("totp")
            case .email where !firstFactor.amr.contains("otp"): methods.append("email")
            case .sms where !firstFactor.amr.contains("sms"): methods.append("sms")
            default: break
            }
        }
        return methods + ["backup_code"]
    }

    private func openChallenge(for user: UserRecord, firstFactor: Assurance, methods enabled: [MfaStore.Method],
                               client: CommonV1.ClientInfo?, command: CommandContext, createdAccount: Bool,
                               on connection: PGConnection) throws -> TokenV1.MfaChallenge {
        let methods = Self.challengeMethods(enabled, after: firstFactor)
        let token = challengeToken(command)
        let expires = try challenges.create(appId: user.appId, id: Identifiers.prefixed("mfa"), uid: user.uid,
                                            tokenHash: Digest.sha256(token), amr: firstFactor.amr, methods: methods,
                                            createdAccount: createdAccount, ip: client?.ip ?? "",
                                            userAgent: client?.userAgent ?? "",
                                            commandId: command.id.isEmpty ? nil : command.id, on: connection)
        if methods.contains("email") { try secondFactors.mailCode(to: user, on: connection) }
        if methods.contains("sms") { try secondFactors.textCode(to: user, ip: client?.ip ?? "", on: connection) }
        return TokenV1.MfaChallenge(challengeToken: token, expiresAt: Timestamp.rfc3339(microsecondsSinceEpoch: expires),
                                    methods: methods)
    }

    private func challengeToken(_ command: CommandContext) -> String {
        guard !command.id.isEmpty else { return Identifiers.secret("mfa") }
        return "mfa_" + Base64URL.encode(Digest.hmacSHA256(key: challengeKey, Array(command.id.utf8)))
    }

    /// The reply for a committed decision, counted here (`identity_sign_ins_total`): the one
    /// place that knows whether a first factor ended in tokens or in a 202 challenge. Failures
    /// are counted from the error reply (`AuthOutcomes`), since they end before a decision. A
    /// sign-up (`countedAsSignIn: false`) has its own metric.
    func answer(_ decision: Decision, for user: UserRecord, isNewUser: Bool,
                signingKey: SigningKeyCache.Entry, countedAsSignIn: Bool = true) throws -> TokenV1.AuthResult {
        let app = Metrics.shared.appLabel(user.appId)
        switch decision {
        case .session(let started, let assurance):
            let result = try issuer.result(for: user, started: started, assurance: assurance, isNewUser: isNewUser,
                                           signingKey: signingKey)
            if countedAsSignIn { ServiceMetrics.signIns.inc(assurance.metricMethod, "success", app) }
            return result
        case .challenge(let challenge, let firstFactor):
            if countedAsSignIn { ServiceMetrics.signIns.inc(firstFactor.metricMethod, "mfa_challenge", app) }
            return TokenV1.AuthResult(isNewUser: isNewUser, mfa: challenge)
        }
    }

    /// The MFA step's own count: the second factor that finished a challenge (`MfaVerification`).
    static func countSecondFactor(appId: String) {
        ServiceMetrics.signIns.inc("mfa", "success", Metrics.shared.appLabel(appId))
    }

    /// The answer a redelivered sign-in command already earned: its session (see
    /// `SessionIssuer.replay`) or its challenge.
    func replay(_ command: CommandContext, appId: String, users: UserStore) throws -> TokenV1.AuthResult? {
        if let answered = try issuer.replay(command, appId: appId, users: users) { return answered }
        guard command.redelivered, !command.id.isEmpty,
              let challenge = try challenges.createdBy(commandId: command.id, appId: appId) else { return nil }
        return TokenV1.AuthResult(isNewUser: challenge.createdAccount, mfa: TokenV1.MfaChallenge(
            challengeToken: challengeToken(command),
            expiresAt: Timestamp.rfc3339(microsecondsSinceEpoch: challenge.expiresAtMicros), methods: challenge.methods))
    }

    /// The app's signing key, fetched before a flow writes anything.
    func signingKey(appId: String) throws -> SigningKeyCache.Entry { try issuer.signingKey(appId: appId) }
}
