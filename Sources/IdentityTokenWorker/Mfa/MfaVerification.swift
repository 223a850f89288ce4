import IdentityCredentials
import IdentityKit

/// `identity.token.v1.VerifyMfa` (POST /v1/auth/mfa/verify): the second step of a sign-in that
/// answered 202. A right code starts the session with the first factor's `amr` plus the
/// second's and `mfa`, at `aal` 2; a wrong one counts against the challenge (5 kill it) and the
/// user's budget across challenges. The challenge row is locked for the check, so parallel
/// verifications of one challenge queue and at most one starts a session.
struct MfaVerification: Sendable {
    let pool: PGPool
    let users: UserStore
    let challenges: MfaChallengeStore
    let factors: SecondFactors
    let failures: SignInFailureAudit
    let issuer: SessionIssuer

    /// Challenge tokens are `mfa_` + 43 base64url characters.
    static func plausible(_ token: String) -> Bool { token.hasPrefix("mfa_") && token.utf8.count <= 128 }

    func handle(_ command: TokenV1.VerifyMfa, _ context: CommandContext) throws -> TokenV1.AuthResult {
        // A redelivered verification whose session committed is answered from it.
        if let replay = try issuer.replay(context, appId: command.appId, users: users) { return replay }
        guard Self.plausible(command.challengeToken) else { throw ServiceError.codeExpired }
        if let method = command.method, !["totp", "email", "sms", "backup_code"].contains(method) {
            throw ServiceError.validationFailed([.init(location: "body.method", message: "must be totp, email, sms or backup_code")])
        }
        let signingKey = try issuer.signingKey(appId: command.appId)
        let result = try pool.transaction { connection -> Result<(UserRecord, SessionIssuer.Started, Assurance, Bool), ServiceError> in
            guard let challenge = try challenges.lock(appId: command.appId, tokenHash: Digest.sha256(command.challengeToken),
                                                      on: connection),
                  challenge.sessionId == nil else { return .failure(.codeExpired) }
            if challenge.expired {
                try challenges.delete(appId: command.appId, id: challenge.id, on: connection)
                return .failure(.codeExpired)
            }
            guard let user = try users.find(appId: command.appId, uid: challenge.uid, on: connection) else {
                return .failure(.codeExpired)
            }
            guard !user.disabled else { return .failure(.userDisabled) }
            let caller = SecurityAlerts.Context(ip: command.client?.ip ?? challenge.ip ?? "",
                                                userAgent: command.client?.userAgent ?? challenge.userAgent ?? "")
            switch try factors.check(command.code, method: command.method, allowed: challenge.methods, user: user,
                                     alertContext: caller, on: connection) {
            case .limited(let statuses):
                return .failure(.rateLimited(statuses))
            case .rejected:
                try failures.note(appId: command.appId, uid: user.uid, method: "mfa", ip: command.client?.ip ?? challenge.ip,
                                  requestId: context.requestId, on: connection)
                let alive = try challenges.countFailure(appId: command.appId, id: challenge.id, on: connection)
                return .failure(alive ? .invalidCode : .codeExpired)
            case .accepted(let amr, _):
                let assurance = Assurance(amr: challenge.amr, aal: 1).completed(by: amr)
                let client = CommonV1.ClientInfo(ip: command.client?.ip ?? challenge.ip ?? "",
                                                 userAgent: command.client?.userAgent ?? challenge.userAgent ?? "")
                let started = try issuer.start(for: user, assurance: assurance, client: client, command: context,
                                               createdAccount: challenge.createdAccount, on: connection)
                try challenges.finish(appId: command.appId, id: challenge.id, sessionId: started.sessionId, on: connection)
                return .success((user, started, assurance, challenge.createdAccount))
            }
        }
        let (user, started, assurance, created) = try result.get()
        let answer = try issuer.result(for: user, started: started, assurance: assurance, isNewUser: created,
                                       signingKey: signingKey)
        SignInOutcome.countSecondFactor(appId: command.appId)
        return answer
    }
}
