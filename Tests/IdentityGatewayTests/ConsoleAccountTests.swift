import XCTest
@testable import IdentityGateway
@testable import IdentityKit

/// The rule a console that requires two-step verification applies to a session, and what of a
/// form may name a passkey in an API path.
final class ConsoleAccountTests: XCTestCase {
    func testOnlyTwoStepsOrAPasskeyAreAStrongSignIn() {
        XCTAssertTrue(ConsoleStore.isStrongSignIn(amr: ["pwd", "otp", "mfa"]))  // password and code
        XCTAssertTrue(ConsoleStore.isStrongSignIn(amr: ["hwk", "mfa"]))  // passkey with user verification
        XCTAssertTrue(ConsoleStore.isStrongSignIn(amr: ["hwk"]))  // passkey without: still phishing-resistant
        XCTAssertFalse(ConsoleStore.isStrongSignIn(amr: ["pwd"]))
        XCTAssertFalse(ConsoleStore.isStrongSignIn(amr: ["otp"]))  // a mailed code is one factor
        XCTAssertFalse(ConsoleStore.isStrongSignIn(amr: ["google"]))
        XCTAssertFalse(ConsoleStore.isStrongSignIn(amr: []))
    }

    func testOnlyAnIdOfTheAPIsAlphabetReachesThePasskeyPath() {
        XCTAssertTrue(ConsoleAccount.isPasskeyId("pk_01HZX-abc_9"))
        for id in ["", "../mfa", "a/b", "a?b", "a%2Fb", "a b", String(repeating: "a", count: 101)] {
            XCTAssertFalse(ConsoleAccount.isPasskeyId(id), id)
        }
    }
}
