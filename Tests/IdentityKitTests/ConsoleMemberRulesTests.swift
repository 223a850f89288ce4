import XCTest
@testable import IdentityKit

/// The rules of the console's Members page that need no store: which address an invitation is
/// for, when a change would leave an app without an owner, and which changes need a fresh sign-in.
final class ConsoleMemberRulesTests: XCTestCase {
    func testAnInvitedAddressIsTrimmedLowerCasedAndCheckedAsSignUpChecksIt() {
        XCTAssertEqual(ConsoleMemberRules.normalizedEmail("  Ann.Lee@Example.COM "), "ann.lee@example.com")
        XCTAssertNil(ConsoleMemberRules.normalizedEmail(""))
        XCTAssertNil(ConsoleMemberRules.normalizedEmail("ann"))
        XCTAssertNil(ConsoleMemberRules.normalizedEmail("ann@example"))
        XCTAssertNil(ConsoleMemberRules.normalizedEmail("ann lee@example.com"))
        XCTAssertNil(ConsoleMemberRules.normalizedEmail("ann@exa\u{7}mple.com"))
        XCTAssertNil(ConsoleMemberRules.normalizedEmail(String(repeating: "a", count: 250) + "@example.com"))
    }

    func testTheLastOwnerIsNeitherRemovedNorDemoted() {
        let one: Set = ["owner@example.com"]
        XCTAssertTrue(ConsoleMemberRules.removesLastOwner(owners: one, email: "owner@example.com", newRole: nil))
        XCTAssertTrue(ConsoleMemberRules.removesLastOwner(owners: one, email: "owner@example.com", newRole: .admin))
        XCTAssertTrue(ConsoleMemberRules.removesLastOwner(owners: one, email: "owner@example.com", newRole: .viewer))
        XCTAssertFalse(ConsoleMemberRules.removesLastOwner(owners: one, email: "owner@example.com", newRole: .owner))
        // Someone else than the owner.
        XCTAssertFalse(ConsoleMemberRules.removesLastOwner(owners: one, email: "admin@example.com", newRole: nil))
        // With a second owner, either may go.
        let two: Set = ["owner@example.com", "other@example.com"]
        XCTAssertFalse(ConsoleMemberRules.removesLastOwner(owners: two, email: "owner@example.com", newRole: nil))
        XCTAssertFalse(ConsoleMemberRules.removesLastOwner(owners: two, email: "other@example.com", newRole: .viewer))
    }

    func testGivingOrTakingOwnershipNeedsAFreshSignIn() {
        XCTAssertTrue(ConsoleMemberRules.needsFreshSignIn(from: nil, to: .owner))
        XCTAssertTrue(ConsoleMemberRules.needsFreshSignIn(from: .owner, to: nil))
        XCTAssertTrue(ConsoleMemberRules.needsFreshSignIn(from: .owner, to: .admin))
        XCTAssertTrue(ConsoleMemberRules.needsFreshSignIn(from: .viewer, to: .owner))
        XCTAssertFalse(ConsoleMemberRules.needsFreshSignIn(from: nil, to: .admin))
        XCTAssertFalse(ConsoleMemberRules.needsFreshSignIn(from: .admin, to: nil))
        XCTAssertFalse(ConsoleMemberRules.needsFreshSignIn(from: .viewer, to: .admin))
        XCTAssertFalse(ConsoleMemberRules.needsFreshSignIn(from: .owner, to: .owner))
    }
}
