import XCTest
@testable import IdentityKit

/// Publisher-confirm bookkeeping: an answer settles exactly the tags it covers, so the relay
/// deletes exactly the outbox rows the broker acked.
final class ConfirmTrackerTests: XCTestCase {
    /// Tags 1…n published as rows "r1"…"rn".
    private func tracker(_ count: UInt64) -> ConfirmTracker<String> {
        var tracker = ConfirmTracker<String>()
        for tag in 1...count { tracker.published(tag: tag, id: "r\(tag)") }
        return tracker
    }

    func testASingleAckSettlesOnlyItsOwnTag() {
        var confirms = tracker(5)
        // The old relay counted "the highest tag acked" as "everything up to it acked".
        XCTAssertEqual(confirms.settle(tag: 5, multiple: false, acked: true), ["r5"])
        XCTAssertEqual(confirms.pendingCount, 4)
        XCTAssertEqual(confirms.acked, ["r5"])
        XCTAssertEqual(confirms.nacked, [])
    }

    func testAMultipleAckSettlesEveryOutstandingTagUpToIt() {
        var confirms = tracker(5)
        XCTAssertEqual(confirms.settle(tag: 3, multiple: true, acked: true), ["r1", "r2", "r3"])
        XCTAssertEqual(confirms.pendingCount, 2)
        XCTAssertEqual(confirms.settle(tag: 5, multiple: true, acked: true), ["r4", "r5"])
        XCTAssertEqual(confirms.pendingCount, 0)
        XCTAssertEqual(confirms.acked, ["r1", "r2", "r3", "r4", "r5"])
    }

    func testNacksSettleAsRefusedSingleAndMultiple() {
        var confirms = tracker(6)
        XCTAssertEqual(confirms.settle(tag: 2, multiple: false, acked: false), ["r2"])
        XCTAssertEqual(confirms.settle(tag: 4, multiple: true, acked: false), ["r1", "r3", "r4"])
        XCTAssertEqual(confirms.settle(tag: 6, multiple: true, acked: true), ["r5", "r6"])
        let (acked, nacked) = confirms.takeSettled()
        XCTAssertEqual(acked, ["r5", "r6"])
        XCTAssertEqual(nacked, ["r2", "r1", "r3", "r4"])
        XCTAssertEqual(confirms.pendingCount, 0)
    }

    func testOutOfOrderAndPartialAnswers() {
        var confirms = tracker(5)
        XCTAssertEqual(confirms.settle(tag: 4, multiple: false, acked: true), ["r4"])
        XCTAssertEqual(confirms.settle(tag: 2, multiple: false, acked: false), ["r2"])
        // A multiple ack up to 5 covers only what is still outstanding: 1, 3, 5.
        XCTAssertEqual(confirms.settle(tag: 5, multiple: true, acked: true), ["r1", "r3", "r5"])
        XCTAssertEqual(confirms.acked, ["r4", "r1", "r3", "r5"])
        XCTAssertEqual(confirms.nacked, ["r2"])
    }

    func testAnswersForUnknownOrSettledTagsSettleNothing() {
        var confirms = tracker(3)
        XCTAssertEqual(confirms.settle(tag: 9, multiple: false, acked: true), [])
        XCTAssertEqual(confirms.settle(tag: 2, multiple: false, acked: true), ["r2"])
        XCTAssertEqual(confirms.settle(tag: 2, multiple: false, acked: false), [], "settled twice")
        XCTAssertEqual(confirms.settle(tag: 2, multiple: true, acked: false), ["r1"])
        XCTAssertEqual(confirms.acked, ["r2"])
        XCTAssertEqual(confirms.nacked, ["r1"])
        XCTAssertEqual(confirms.pendingCount, 1)
    }

    func testTagZeroWithMultipleSettlesEverything() {
        var confirms = tracker(4)
        XCTAssertEqual(confirms.settle(tag: 0, multiple: true, acked: true), ["r1", "r2", "r3", "r4"])
        XCTAssertEqual(confirms.settle(tag: 0, multiple: false, acked: true), [])
    }

    func testTakeSettledHandsOverOnceAndKeepsOutstandingTags() {
        var confirms = tracker(3)
        confirms.settle(tag: 1, multiple: false, acked: true)
        XCTAssertEqual(confirms.takeSettled().acked, ["r1"])
        XCTAssertEqual(confirms.takeSettled().acked, [])
        confirms.published(tag: 4, id: "r4")
        XCTAssertEqual(confirms.settle(tag: 4, multiple: true, acked: true), ["r2", "r3", "r4"])
    }
}
