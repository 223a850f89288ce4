import Foundation
import XCTest
import IdentityClient

/// Second factors through the SDK: TOTP enrolment with codes computed by the server's own
/// RFC 6238 code (IdentityCredentials.TOTP), the 202 challenge, backup codes, the email factor.
final class MFAE2ETests: XCTestCase {
    func testTOTPEnrolChallengeVerifyBackupCodesAndDisable() async throws {
        let e2e = try E2E.environment()
        let email = E2E.uniqueEmail("mfa")
        let client = e2e.client()
        _ = try await client.signUp(email: email, password: E2E.password)
        let before = try await client.mfaStatus()
        XCTAssertFalse(before.enabled)

        try await Authenticator.awayFromStepEdge()
        let enrollment = try await client.enrollTOTP()
        XCTAssertTrue(enrollment.otpauthURI.hasPrefix("otpauth://totp/"), enrollment.otpauthURI)
        XCTAssertTrue(enrollment.qrSVG.hasPrefix("<svg"))
        await assertIdentityError(.invalidCode) { try await client.confirmTOTP(code: "000000" == Authenticator.code(secretBase32: enrollment.secret) ? "111111" : "000000") }
        let backupCodes = try await client.confirmTOTP(code: Authenticator.code(secretBase32: enrollment.secret))
        XCTAssertEqual(Set(backupCodes).count, 10)
        let status = try await client.mfaStatus()
        XCTAssertTrue(status.enabled)
        XCTAssertEqual(status.methods, ["totp"])
        XCTAssertEqual(status.backupCodesRemaining, 10)

        // A first factor now answers a challenge; the SDK keeps no session until the second.
        let second = e2e.client()
        let result = try await second.signIn(email: email, password: E2E.password)
        guard case .mfaRequired(let challenge) = result else { return XCTFail("\(result)") }
        XCTAssertTrue(challenge.methods.contains("totp"), "\(challenge.methods)")
        let notYet = await second.isSignedIn
        XCTAssertFalse(notYet)
        await assertIdentityError(.invalidCode) { try await second.verifyMFA(challenge, code: "12345x") }
        let user = try await second.verifyMFA(challenge, code: Authenticator.code(secretBase32: enrollment.secret, offsetSteps: 1))
        XCTAssertTrue(user.mfaEnabled)
        let sessions = try await second.sessions()
        let current = try XCTUnwrap(sessions.first { $0.current })
        XCTAssertTrue(current.mfaVerified)
        XCTAssertTrue(current.amr.contains("mfa"), "\(current.amr)")

        // A backup code works once.
        let third = e2e.client()
        guard case .mfaRequired(let again) = try await third.signIn(email: email, password: E2E.password) else {
            return XCTFail("no challenge")
        }
        _ = try await third.verifyMFA(again, code: backupCodes[0])
        let fresh = try await third.regenerateBackupCodes()
        XCTAssertEqual(fresh.count, 10)
        XCTAssertTrue(Set(fresh).isDisjoint(with: backupCodes))
        await assertIdentityError(.invalidCode) { try await third.disableMFA(code: backupCodes[1]) }
        try await third.disableMFA(code: fresh[0])
        let off = try await third.mfaStatus()
        XCTAssertFalse(off.enabled)
        let plain = try await e2e.client().signIn(email: email, password: E2E.password)
        XCTAssertNotNil(plain.user, "no challenge once MFA is off")
    }

    func testEmailSecondFactor() async throws {
        let e2e = try E2E.environment()
        let email = E2E.uniqueEmail("mfamail")
        let client = e2e.client()
        let first = try await e2e.mailedCode(to: email) { try await client.sendEmailCode(email: email) }
        _ = try await client.signInWithEmailCode(email: email, code: first.code).signedInUser()
        let enrol = try await e2e.mailedCode(to: email) { try await client.enrollEmailMFA() }
        let codes = try await client.confirmEmailMFA(code: enrol.code)
        XCTAssertEqual(codes.count, 10)
        let status = try await client.mfaStatus()
        XCTAssertTrue(status.methods.contains("email"), "\(status.methods)")
    }
}
