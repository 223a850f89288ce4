import XCTest
@testable import IdentityCredentials
@testable import IdentityKit
@testable import IdentityTokenWorker

/// Step-up (docs/api-contract.md, "Account": fresh proof): a session signed in less than 5 minutes
/// ago, at aal 2 once MFA is on; the rule on its own first, then each `FreshProofRule` against the
/// real store.
final class StepUpRuleTests: XCTestCase {
    func testTheWindowIsFiveMinutes() {
        XCTAssertEqual(StepUp.maximumAgeSeconds, 300)
    }

    func testMfaOffOnlyTheAgeCounts() {
        XCTAssertTrue(StepUp.isFresh(ageSeconds: 0, aal: 1, mfaOn: false))
        XCTAssertTrue(StepUp.isFresh(ageSeconds: 299, aal: 1, mfaOn: false))
        XCTAssertFalse(StepUp.isFresh(ageSeconds: 300, aal: 1, mfaOn: false), "5 minutes exactly is too old")
        XCTAssertFalse(StepUp.isFresh(ageSeconds: 301, aal: 2, mfaOn: false))
        XCTAssertFalse(StepUp.isFresh(ageSeconds: 86_400, aal: 2, mfaOn: false))
    }

    func testMfaOnTheSessionMustAlsoBeAal2() {
        XCTAssertFalse(StepUp.isFresh(ageSeconds: 0, aal: 1, mfaOn: true), "a fresh password-only session is not enough")
        XCTAssertTrue(StepUp.isFresh(ageSeconds: 0, aal: 2, mfaOn: true))
        XCTAssertTrue(StepUp.isFresh(ageSeconds: 299, aal: 2, mfaOn: true))
        XCTAssertFalse(StepUp.isFresh(ageSeconds: 300, aal: 2, mfaOn: true))
    }
}

final class StepUpStoreTests: XCTestCase {
    private var db: TestDatabase!
    private let password = "correct horse battery"
    private let reauth = ServiceError.reauthRequired.code

    override func setUpWithError() throws { db = try TestDatabase() }
    override func tearDown() { db = nil }

    private var stepUp: StepUp { db.parts.stepUp }

    private func check(_ rule: FreshProofRule, _ user: UserRecord, _ sessionId: String) -> String? {
        thrownCode { try stepUp.check(rule, appId: db.app.id, uid: user.uid, sessionId: sessionId) }
    }

    func testFreshSignInWithMfaOff() throws {
        let user = try db.insertUser(email: "off@example.com", password: password)
        XCTAssertFalse(try stepUp.mfaOn(appId: db.app.id, uid: user.uid))
        XCTAssertNil(check(.freshSignIn, user, try db.session(for: user)))
        XCTAssertNil(check(.freshSignIn, user, try db.session(for: user, ageSeconds: 240)))
        XCTAssertEqual(check(.freshSignIn, user, try db.session(for: user, ageSeconds: 301)), reauth)
        XCTAssertEqual(check(.freshSignIn, user, "ses_unknown"), reauth, "no such session")
        // Another user's fresh session is no proof for this one.
        let other = try db.insertUser(email: "other@example.com")
        XCTAssertEqual(check(.freshSignIn, user, try db.session(for: other)), reauth)
    }

    func testAnEndedSessionIsNoProof() throws {
        let user = try db.insertUser(email: "ended@example.com")
        let sessionId = try db.session(for: user)
        _ = try db.pool.transaction {
            try db.parts.sessions.end(appId: db.app.id, uid: user.uid, sessionId: sessionId, reason: "sign_out", on: $0)
        }
        XCTAssertEqual(check(.freshSignIn, user, sessionId), reauth)
    }

    func testFreshSignInWithMfaOnNeedsAal2() throws {
        let user = try db.insertUser(email: "on@example.com", password: password)
        try db.enableTOTP(for: user)
        XCTAssertTrue(try stepUp.mfaOn(appId: db.app.id, uid: user.uid))
        XCTAssertEqual(check(.freshSignIn, user, try db.session(for: user, aal: 1)), reauth)
        XCTAssertNil(check(.freshSignIn, user, try db.session(for: user, aal: 2, amr: ["pwd", "otp", "mfa"])))
        XCTAssertEqual(check(.freshSignIn, user, try db.session(for: user, aal: 2, ageSeconds: 301)), reauth)
    }

    /// The password change checks its own proof (the current password): step-up only once MFA is on.
    func testStepUpWhenMfaOn() throws {
        let user = try db.insertUser(email: "change@example.com", password: password)
        let old = try db.session(for: user, ageSeconds: 3600)
        XCTAssertNil(check(.stepUpWhenMfaOn, user, old), "MFA off: an old session is enough")
        try db.enableTOTP(for: user)
        XCTAssertEqual(check(.stepUpWhenMfaOn, user, old), reauth)
        XCTAssertEqual(check(.stepUpWhenMfaOn, user, try db.session(for: user, aal: 1)), reauth)
        XCTAssertNil(check(.stepUpWhenMfaOn, user, try db.session(for: user, aal: 2)))
    }

    /// Linking a provider: a fresh sign-in, or (MFA off) the account's password instead.
    func testFreshSignInOrPassword() throws {
        let user = try db.insertUser(email: "link@example.com", password: password)
        let old = try db.session(for: user, ageSeconds: 3600)
        XCTAssertNil(check(.freshSignInOrPassword(nil), user, try db.session(for: user)), "a fresh session alone")
        XCTAssertNil(check(.freshSignInOrPassword(password), user, old), "the password stands in for the fresh sign-in")
        XCTAssertEqual(check(.freshSignInOrPassword("wrong password"), user, old), reauth)
        XCTAssertEqual(check(.freshSignInOrPassword(nil), user, old), reauth)
        XCTAssertEqual(check(.freshSignInOrPassword(""), user, old), reauth)
        let tooLong = String(repeating: "a", count: PasswordPolicy.maximumLength + 1)
        XCTAssertEqual(check(.freshSignInOrPassword(tooLong), user, old), reauth)

        // With MFA on the password is one factor: not proof enough on its own.
        try db.enableTOTP(for: user)
        XCTAssertEqual(check(.freshSignInOrPassword(password), user, old), reauth)
        XCTAssertEqual(check(.freshSignInOrPassword(password), user, try db.session(for: user, aal: 1)), reauth)
        XCTAssertNil(check(.freshSignInOrPassword(nil), user, try db.session(for: user, aal: 2)))
    }

    func testAPasswordIsNoProofForAnAccountWithoutOne() throws {
        let user = try db.insertUser(email: "nopw@example.com")
        XCTAssertEqual(check(.freshSignInOrPassword(password), user, try db.session(for: user, ageSeconds: 3600)), reauth)
    }

    /// `require` (account deletion): step-up when MFA is on, or when the caller asks for it anyway.
    func testRequireEvenWithoutMfa() throws {
        let user = try db.insertUser(email: "delete@example.com", password: password)
        let old = try db.session(for: user, ageSeconds: 3600)
        func require(_ sessionId: String, evenWithoutMFA: Bool) -> String? {
            thrownCode { try stepUp.require(appId: db.app.id, uid: user.uid, sessionId: sessionId, evenWithoutMFA: evenWithoutMFA) }
        }
        XCTAssertNil(require(old, evenWithoutMFA: false))
        XCTAssertEqual(require(old, evenWithoutMFA: true), reauth)
        XCTAssertNil(require(try db.session(for: user), evenWithoutMFA: true))
        try db.enableTOTP(for: user)
        XCTAssertEqual(require(old, evenWithoutMFA: false), reauth)
        XCTAssertEqual(require(try db.session(for: user, aal: 1), evenWithoutMFA: false), reauth)
        XCTAssertNil(require(try db.session(for: user, aal: 2), evenWithoutMFA: false))
    }
}
