import XCTest
@testable import IdentityKit

/// The one "last way in" rule (docs/api-contract.md, "Account") that every removal asks.
final class WaysInTests: XCTestCase {
    func testEachKindCountsAndOneMayGoOnlyWhenAnotherStays() {
        XCTAssertEqual(WaysIn().count, 0)
        XCTAssertFalse(WaysIn().oneMayGo)
        // Any single way in is the last one, whatever its kind.
        for alone in [WaysIn(password: true), WaysIn(providers: 1), WaysIn(passkeys: 1), WaysIn(phone: true),
                      WaysIn(email: true)] {
            XCTAssertEqual(alone.count, 1, "\(alone)")
            XCTAssertFalse(alone.oneMayGo, "\(alone)")
        }
        // Two of anything: one may go.
        XCTAssertTrue(WaysIn(providers: 1, passkeys: 1).oneMayGo, "a Google user with a passkey may unlink Google")
        XCTAssertTrue(WaysIn(passkeys: 1, phone: true).oneMayGo, "a verified phone keeps the account reachable")
        XCTAssertTrue(WaysIn(providers: 1, email: true).oneMayGo, "a verified email signs in by mailed code")
        XCTAssertTrue(WaysIn(passkeys: 2).oneMayGo)
        XCTAssertTrue(WaysIn(providers: 2).oneMayGo)
        XCTAssertEqual(WaysIn(password: true, providers: 2, passkeys: 3, phone: true, email: true).count, 8)
    }

    func testAPhoneCountsOnlyWhenVerifiedAndTheAppTextsItsCallingCode() {
        XCTAssertTrue(WaysIn.phoneCounts(verified: "+33612345678", allowedCallingCodes: [33, 44]))
        XCTAssertFalse(WaysIn.phoneCounts(verified: "+33612345678", allowedCallingCodes: [44]),
                       "no sign-in code can reach a number the app does not text")
        XCTAssertFalse(WaysIn.phoneCounts(verified: "+33612345678", allowedCallingCodes: []))
        XCTAssertFalse(WaysIn.phoneCounts(verified: nil, allowedCallingCodes: [33]))
        XCTAssertTrue(WaysIn.phoneCounts(verified: "+14155550123", allowedCallingCodes: [1]))
    }
}
