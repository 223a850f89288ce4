import Foundation
import XCTest
@testable import IdentityCredentials
@testable import IdentityKit
@testable import IdentityTokenWorker

/// The one sign-in outcome (docs/architecture.md, "Processes"): which second factors may answer
/// a challenge, and how every ending of a sign-in is counted in `identity_sign_ins_total`
/// (success, mfa_challenge, the failures). The tests read the process's own registry.
final class SignInOutcomeChallengeMethodsTests: XCTestCase {
    func testEveryEnabledFactorAnswersAfterAPasswordAndBackupCodesAlways() {
        XCTAssertEqual(SignInOutcome.challengeMethods([.totp, .email, .sms], after: .password),
                       ["totp", "email", "sms", "backup_code"])
        XCTAssertEqual(SignInOutcome.challengeMethods([.totp], after: .password), ["totp", "backup_code"])
        XCTAssertEqual(SignInOutcome.challengeMethods([], after: .password), ["backup_code"])
        XCTAssertEqual(SignInOutcome.challengeMethods([.totp, .email, .sms], after: .provider("google")),
                       ["totp", "email", "sms", "backup_code"])
        XCTAssertEqual(SignInOutcome.challengeMethods([.email, .sms], after: .passkey(userVerified: false)),
                       ["email", "sms", "backup_code"])
    }

    /// A passwordless first factor never counts as both factors.
    func testTheFirstFactorsOwnChannelCannotAlsoBeTheSecond() {
        XCTAssertEqual(SignInOutcome.challengeMethods([.totp, .email, .sms], after: .emailCode),
                       ["totp", "sms", "backup_code"], "an email code sign-in cannot be finished by an email code")
        XCTAssertEqual(SignInOutcome.challengeMethods([.totp, .email, .sms], after: .phoneCode),
                       ["totp", "email", "backup_code"], "a phone code sign-in cannot be finished by an SMS code")
        XCTAssertEqual(SignInOutcome.challengeMethods([.email], after: .emailCode), ["backup_code"])
        XCTAssertEqual(SignInOutcome.challengeMethods([.sms], after: .phoneCode), ["backup_code"])
    }
}

final class SignInMetricsTests: XCTestCase {
    private func reply(error: ServiceError) -> CommandConsumer.Reply { CommandReplies.error(error) }

    func testTheSecondStepCountsAsMfaSuccess() {
        let before = signInCount(method: "mfa", outcome: "success")
        SignInOutcome.countSecondFactor(appId: "app_metrics")
        XCTAssertEqual(signInCount(method: "mfa", outcome: "success"), before + 1)
    }

    /// Failures end before a decision and are counted from the error reply, per method.
    func testFailedSignInsAreCountedByMethodAndReason() throws {
        let cases: [(type: String, method: String, error: ServiceError, outcome: String)] = [
            (TokenV1.SignIn.protoName, "password", .invalidCredential, "invalid_credential"),
            (TokenV1.VerifyEmailCode.protoName, "email_code", .invalidCode, "invalid_credential"),
            (TokenV1.VerifyPhoneCode.protoName, "phone", .codeExpired, "invalid_credential"),
            (TokenV1.VerifyPasskey.protoName, "passkey", .invalidToken, "invalid_credential"),
            (TokenV1.ProviderSignIn.protoName, "provider", .userDisabled, "disabled"),
            (TokenV1.GuestSignIn.protoName, "guest", ServiceError(code: "auth/rate-limited", status: 429, detail: ""),
             "rate_limited"),
            (TokenV1.VerifyMfa.protoName, "mfa", .internal, "error"),
            (TokenV1.SignIn.protoName, "password", .unavailable, "error"),
        ]
        for item in cases {
            let before = signInCount(method: item.method, outcome: item.outcome)
            let message = BusMessage(type: item.type, body: Data("{}".utf8))
            let answered = AuthOutcomes.record(message, reply(error: item.error))
            XCTAssertEqual(answered.errorCode, item.error.code, "the reply is handed back unchanged")
            XCTAssertEqual(signInCount(method: item.method, outcome: item.outcome), before + 1,
                           "\(item.type) failing with \(item.error.code)")
        }
    }

    /// A sign-in that succeeds or opens a challenge is counted once, where that is decided
    /// (`SignInOutcome.answer`): its successful reply adds nothing here.
    func testASuccessfulReplyIsNotCountedAgain() throws {
        let before = ["success", "mfa_challenge", "error", "invalid_credential"].map {
            signInCount(method: "password", outcome: $0)
        }
        let message = BusMessage(type: TokenV1.SignIn.protoName, body: Data("{}".utf8))
        _ = AuthOutcomes.record(message, try CommandConsumer.Reply(TokenV1.AuthResult(accessToken: "x")))
        XCTAssertEqual(["success", "mfa_challenge", "error", "invalid_credential"].map {
            signInCount(method: "password", outcome: $0)
        }, before)
    }

    func testSignUpsAreCountedApartFromSignIns() throws {
        let signIns = signInCount(method: "password", outcome: "success")
        let successes = signUpCount(outcome: "success")
        let taken = signUpCount(outcome: ServiceError.emailAlreadyInUse.code)
        let message = BusMessage(type: TokenV1.SignUp.protoName, body: Data("{}".utf8))
        _ = AuthOutcomes.record(message, try CommandConsumer.Reply(TokenV1.AuthResult(accessToken: "x")))
        _ = AuthOutcomes.record(message, reply(error: .emailAlreadyInUse))
        XCTAssertEqual(signUpCount(outcome: "success"), successes + 1)
        XCTAssertEqual(signUpCount(outcome: ServiceError.emailAlreadyInUse.code), taken + 1)
        XCTAssertEqual(signInCount(method: "password", outcome: "success"), signIns)
    }
}

/// `decide` and `answer` against the real store: tokens when no second factor is on (the
/// session records the assurance), a challenge and no session when one is, none needed after a
/// first factor that is two by itself; each counted by method and outcome.
final class SignInOutcomeStoreTests: XCTestCase {
    private var db: TestDatabase!

    override func setUpWithError() throws { db = try TestDatabase() }
    override func tearDown() { db = nil }

    private func decide(_ user: UserRecord, _ firstFactor: Assurance,
                        command: CommandContext = CommandContext(id: "", redelivered: false)) throws -> SignInOutcome.Decision {
        try db.pool.transaction { connection in
            try db.parts.signIns.decide(for: user, by: firstFactor, client: CommonV1.ClientInfo(ip: "127.0.0.1", userAgent: "t"),
                                        command: command, createdAccount: false, on: connection)
        }
    }

    private func liveSessions(_ user: UserRecord) throws -> Int {
        try db.parts.sessions.live(appId: db.app.id, uid: user.uid).count
    }

    /// The access token's payload, as JSON.
    private func claims(_ token: String) throws -> [String: Any] {
        let parts = token.split(separator: ".")
        XCTAssertEqual(parts.count, 3)
        let payload = try XCTUnwrap(Base64URL.decode(parts[1]))
        return try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any])
    }

    func testWithoutASecondFactorTheSessionStartsWithThePasswordsAssurance() throws {
        let user = try db.insertUser(email: "nomfa@example.com", password: "correct horse battery")
        let decision = try decide(user, .password)
        guard case .session(let started, let assurance) = decision else { return XCTFail("expected a session: \(decision)") }
        XCTAssertEqual(assurance, .password)
        let stored = try XCTUnwrap(try db.parts.sessions.assurance(appId: db.app.id, sessionId: started.sessionId, uid: user.uid))
        XCTAssertEqual(stored.aal, 1)

        let before = signInCount(method: "password", outcome: "success")
        let challenges = signInCount(method: "password", outcome: "mfa_challenge")
        let result = try db.parts.signIns.answer(decision, for: user, isNewUser: false,
                                                 signingKey: db.parts.signIns.signingKey(appId: db.app.id))
        XCTAssertNil(result.mfa)
        XCTAssertEqual(result.sessionId, started.sessionId)
        XCTAssertFalse(result.refreshToken.isEmpty)
        let payload = try claims(result.accessToken)
        XCTAssertEqual(payload["amr"] as? [String], ["pwd"])
        XCTAssertEqual(payload["aal"] as? Int, 1)
        XCTAssertEqual(payload["sid"] as? String, started.sessionId)
        XCTAssertEqual(signInCount(method: "password", outcome: "success"), before + 1)
        XCTAssertEqual(signInCount(method: "password", outcome: "mfa_challenge"), challenges)
    }

    func testWithMfaOnAPasswordOpensAChallengeAndNoSession() throws {
        let user = try db.insertUser(email: "mfa@example.com", password: "correct horse battery")
        try db.enableTOTP(for: user)
        let decision = try decide(user, .password)
        guard case .challenge(let challenge, let firstFactor) = decision else {
            return XCTFail("expected a challenge: \(decision)")
        }
        XCTAssertEqual(firstFactor, .password)
        XCTAssertEqual(challenge.methods, ["totp", "backup_code"])
        XCTAssertTrue(challenge.challengeToken.hasPrefix("mfa_"))
        XCTAssertEqual(try liveSessions(user), 0, "no session before the second factor")

        let successes = signInCount(method: "password", outcome: "success")
        let before = signInCount(method: "password", outcome: "mfa_challenge")
        let result = try db.parts.signIns.answer(decision, for: user, isNewUser: true,
                                                 signingKey: db.parts.signIns.signingKey(appId: db.app.id))
        XCTAssertEqual(result.mfa, challenge)
        XCTAssertEqual(result.accessToken, "", "no token before the second factor")
        XCTAssertEqual(result.refreshToken, "")
        XCTAssertTrue(result.isNewUser)
        XCTAssertEqual(signInCount(method: "password", outcome: "mfa_challenge"), before + 1)
        XCTAssertEqual(signInCount(method: "password", outcome: "success"), successes)
    }

    func testAVerifiedPasskeyNeedsNoSecondFactorAnUnverifiedOneDoes() throws {
        let user = try db.insertUser(email: "pk@example.com")
        try db.enableTOTP(for: user)

        let verified = try decide(user, .passkey(userVerified: true))
        guard case .session(let started, let assurance) = verified else { return XCTFail("expected a session: \(verified)") }
        XCTAssertEqual(assurance.aal, 2)
        XCTAssertEqual(try db.parts.sessions.assurance(appId: db.app.id, sessionId: started.sessionId, uid: user.uid)?.aal, 2)
        let before = signInCount(method: "passkey", outcome: "success")
        let result = try db.parts.signIns.answer(verified, for: user, isNewUser: false,
                                                 signingKey: db.parts.signIns.signingKey(appId: db.app.id))
        let payload = try claims(result.accessToken)
        XCTAssertEqual(payload["amr"] as? [String], ["hwk", "mfa"])
        XCTAssertEqual(payload["aal"] as? Int, 2)
        XCTAssertEqual(signInCount(method: "passkey", outcome: "success"), before + 1)

        let unverified = try decide(user, .passkey(userVerified: false))
        guard case .challenge(let challenge, _) = unverified else { return XCTFail("expected a challenge: \(unverified)") }
        XCTAssertEqual(challenge.methods, ["totp", "backup_code"])
    }

    func testASignUpIsNotCountedAsASignIn() throws {
        let user = try db.insertUser(email: "signup@example.com", password: "correct horse battery")
        let decision = try decide(user, .password)
        let before = signInCount(method: "password", outcome: "success")
        let result = try db.parts.signIns.answer(decision, for: user, isNewUser: true,
                                                 signingKey: db.parts.signIns.signingKey(appId: db.app.id),
                                                 countedAsSignIn: false)
        XCTAssertFalse(result.accessToken.isEmpty)
        XCTAssertEqual(signInCount(method: "password", outcome: "success"), before)
    }

    /// A redelivered first-factor command is answered with the challenge it opened, not a new one.
    func testARedeliveredCommandGetsTheSameChallenge() throws {
        let user = try db.insertUser(email: "replay@example.com", password: "correct horse battery")
        try db.enableTOTP(for: user)
        let first = CommandContext(id: "msg_1." + String(repeating: "ab", count: 32), redelivered: false)
        guard case .challenge(let challenge, _) = try decide(user, .password, command: first) else {
            return XCTFail("expected a challenge")
        }
        let again = CommandContext(id: first.id, redelivered: true)
        let replayed = try db.parts.signIns.replay(again, appId: db.app.id, users: db.parts.users)
        XCTAssertEqual(replayed?.mfa?.challengeToken, challenge.challengeToken)
        XCTAssertEqual(replayed?.mfa?.methods, challenge.methods)
        XCTAssertNil(try db.parts.signIns.replay(CommandContext(id: first.id, redelivered: false), appId: db.app.id,
                                                 users: db.parts.users), "a first delivery is never a replay")
    }
}
