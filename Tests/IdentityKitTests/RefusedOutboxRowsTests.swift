import XCTest
@testable import IdentityKit

/// Outbox rows the broker nacked are held back for a delay that doubles per refusal, so the
/// relay neither spins on them nor lets them block the rows behind.
final class RefusedOutboxRowsTests: XCTestCase {
    func testARefusedRowIsHeldBackForADoublingDelayUpToTheMaximum() {
        var rows = RefusedOutboxRows(firstDelay: 0.5, maximumDelay: 2)
        XCTAssertEqual(rows.refused(["7"], now: 100), 0.5)
        XCTAssertEqual(rows.heldBack(now: 100.4), ["7"])
        XCTAssertEqual(rows.heldBack(now: 100.5), [])
        XCTAssertEqual(rows.refused(["7"], now: 101), 1)
        XCTAssertEqual(rows.heldBack(now: 101.9), ["7"])
        XCTAssertEqual(rows.refused(["7"], now: 102), 2)
        XCTAssertEqual(rows.refused(["7"], now: 104), 2, "capped")
        XCTAssertEqual(rows.heldBack(now: 105.9), ["7"])
    }

    func testDeliveredRowsAreForgottenAndOthersKept() {
        var rows = RefusedOutboxRows(firstDelay: 1, maximumDelay: 10)
        rows.refused(["1", "2", "3"], now: 0)
        rows.delivered(["2"])
        XCTAssertEqual(rows.heldBack(now: 0.5), ["1", "3"])
        // After a delivery a new refusal starts again from the first delay.
        XCTAssertEqual(rows.refused(["2"], now: 0.5), 1)
    }

    func testStaleHoldsAreForgotten() {
        var rows = RefusedOutboxRows(firstDelay: 1, maximumDelay: 10)
        rows.refused(["1"], now: 0)
        rows.forgetStale(now: 15)
        XCTAssertFalse(rows.isEmpty)
        rows.forgetStale(now: 21.5)
        XCTAssertTrue(rows.isEmpty)
    }
}
