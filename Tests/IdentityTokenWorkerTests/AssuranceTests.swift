import XCTest
@testable import IdentityTokenWorker

/// What a sign-in proved (docs/api-contract.md, "Tokens and sessions"): `amr` and `aal` of each
/// first factor, the second factor's completion, and the sign-in metric's method label.
final class AssuranceTests: XCTestCase {
    func testEveryOneFactorMethodIsAal1WithItsRFC8176Name() {
        XCTAssertEqual(Assurance.password, Assurance(amr: ["pwd"], aal: 1))
        XCTAssertEqual(Assurance.emailCode, Assurance(amr: ["otp"], aal: 1))
        XCTAssertEqual(Assurance.phoneCode, Assurance(amr: ["sms"], aal: 1))
        XCTAssertEqual(Assurance.guest, Assurance(amr: ["guest"], aal: 1))
        for provider in ["apple", "google", "firebase"] {
            XCTAssertEqual(Assurance.provider(provider), Assurance(amr: [provider], aal: 1), provider)
        }
    }

    func testAPasskeyIsTwoFactorsOnlyWithUserVerification() {
        XCTAssertEqual(Assurance.passkey(userVerified: true), Assurance(amr: ["hwk", "mfa"], aal: 2))
        XCTAssertEqual(Assurance.passkey(userVerified: false), Assurance(amr: ["hwk"], aal: 1),
                       "a passkey without user verification is something the user has, one factor")
    }

    func testASecondFactorAddsItsMethodAndMfaAtAal2() {
        XCTAssertEqual(Assurance.password.completed(by: "otp"), Assurance(amr: ["pwd", "otp", "mfa"], aal: 2))
        XCTAssertEqual(Assurance.provider("google").completed(by: "totp"),
                       Assurance(amr: ["google", "totp", "mfa"], aal: 2))
        XCTAssertEqual(Assurance.phoneCode.completed(by: "otp"), Assurance(amr: ["sms", "otp", "mfa"], aal: 2))
        // A method already there is not listed twice; completing twice changes nothing more.
        XCTAssertEqual(Assurance.emailCode.completed(by: "otp"), Assurance(amr: ["otp", "mfa"], aal: 2))
        let once = Assurance.password.completed(by: "otp")
        XCTAssertEqual(once.completed(by: "otp"), once)
        XCTAssertEqual(Assurance.passkey(userVerified: false).completed(by: "mfa"), Assurance(amr: ["hwk", "mfa"], aal: 2))
    }

    func testMetricMethodLabelOfEachFirstFactor() {
        XCTAssertEqual(Assurance.password.metricMethod, "password")
        XCTAssertEqual(Assurance.emailCode.metricMethod, "email_code")
        XCTAssertEqual(Assurance.phoneCode.metricMethod, "phone")
        XCTAssertEqual(Assurance.guest.metricMethod, "guest")
        XCTAssertEqual(Assurance.passkey(userVerified: true).metricMethod, "passkey")
        XCTAssertEqual(Assurance.passkey(userVerified: false).metricMethod, "passkey")
        XCTAssertEqual(Assurance.provider("apple").metricMethod, "provider")
        XCTAssertEqual(Assurance.provider("google").metricMethod, "provider")
        // The label follows the first factor, not the second that completed it.
        XCTAssertEqual(Assurance.password.completed(by: "otp").metricMethod, "password")
    }

    /// Successes (`SignInOutcome.answer`) and failures (`AuthOutcomes`) of one method must land
    /// on the same `method` label, or a dashboard's failure ratio is computed over nothing.
    func testSuccessAndFailureCountsShareTheMethodLabels() {
        let firstFactors = [Assurance.password, .emailCode, .phoneCode, .guest, .passkey(userVerified: true),
                            .provider("google")]
        let failureLabels = Set(AuthOutcomes.signInMethods.values)
        for assurance in firstFactors {
            XCTAssertTrue(failureLabels.contains(assurance.metricMethod), "\(assurance.amr) → \(assurance.metricMethod)")
        }
        XCTAssertEqual(failureLabels, Set(firstFactors.map(\.metricMethod)).union(["mfa"]))
    }
}
