import IdentityKit
import IdentityOutbound
import XCTest

/// `HookFairness`: the per-app and total bounds on waiting hook calls, the one held connection
/// bound, and the breaker (opens after N failures in a row, one probe after the open period).
final class HookFairnessTests: XCTestCase {
    final class Clock: @unchecked Sendable {
        var nanoseconds: UInt64 = 1_000_000_000
    }

    private func fairness(_ limits: HookFairness.Limits, clock: Clock = Clock()) -> HookFairness {
        HookFairness(limits: limits, now: { clock.nanoseconds })
    }

    private func ticket(_ admission: HookFairness.Admission, file: StaticString = #filePath, line: UInt = #line)
        -> HookFairness.Ticket? {
        guard case .go(let ticket) = admission else {
            XCTFail("refused: \(admission)", file: file, line: line)
            return nil
        }
        return ticket
    }

    private func isRefused(_ admission: HookFairness.Admission) -> Bool {
        if case .refused = admission { return true }
        return false
    }

    func testAnAppWaitsOnAtMostItsShareAndOtherAppsKeepTheirs() throws {
        let bounds = fairness(.init(perApp: 2, total: 3, holdingConnection: 1, failuresToOpen: 5, openSeconds: 30))
        let first = try XCTUnwrap(ticket(bounds.admit(appId: "a", kind: "before_token", holdsConnection: false)))
        _ = try XCTUnwrap(ticket(bounds.admit(appId: "a", kind: "before_token", holdsConnection: false)))
        XCTAssertTrue(isRefused(bounds.admit(appId: "a", kind: "before_sign_up", holdsConnection: false)), "a's third call")
        _ = try XCTUnwrap(ticket(bounds.admit(appId: "b", kind: "before_token", holdsConnection: false)))
        XCTAssertTrue(isRefused(bounds.admit(appId: "c", kind: "before_token", holdsConnection: false)), "the total")
        bounds.finish(first, answered: true)
        XCTAssertFalse(isRefused(bounds.admit(appId: "c", kind: "before_token", holdsConnection: false)))
    }

    func testCallsInsideATransactionHaveABoundOfTheirOwn() throws {
        let bounds = fairness(.init(perApp: 4, total: 8, holdingConnection: 1, failuresToOpen: 5, openSeconds: 30))
        let held = try XCTUnwrap(ticket(bounds.admit(appId: "a", kind: "before_sign_up", holdsConnection: true)))
        XCTAssertTrue(isRefused(bounds.admit(appId: "b", kind: "before_sign_up", holdsConnection: true)))
        XCTAssertFalse(isRefused(bounds.admit(appId: "b", kind: "before_token", holdsConnection: false)))
        bounds.finish(held, answered: false)
        XCTAssertFalse(isRefused(bounds.admit(appId: "b", kind: "before_sign_up", holdsConnection: true)))
    }

    func testTheBreakerOpensAfterFailuresInARowAndOneProbeClosesIt() throws {
        let clock = Clock()
        let bounds = fairness(.init(perApp: 4, total: 8, holdingConnection: 1, failuresToOpen: 3, openSeconds: 30), clock: clock)
        var opened: [Bool] = []
        for _ in 0..<3 {
            let call = try XCTUnwrap(ticket(bounds.admit(appId: "a", kind: "before_token", holdsConnection: false)))
            opened.append(bounds.finish(call, answered: false))
        }
        XCTAssertEqual(opened, [false, false, true], "opens once, on the third failure")
        XCTAssertTrue(isRefused(bounds.admit(appId: "a", kind: "before_token", holdsConnection: false)))
        XCTAssertFalse(isRefused(bounds.admit(appId: "a", kind: "send_email", holdsConnection: false)), "per hook")
        XCTAssertFalse(isRefused(bounds.admit(appId: "b", kind: "before_token", holdsConnection: false)), "per app")

        clock.nanoseconds += 30_000_000_000
        let probe = try XCTUnwrap(ticket(bounds.admit(appId: "a", kind: "before_token", holdsConnection: false)))
        XCTAssertTrue(isRefused(bounds.admit(appId: "a", kind: "before_token", holdsConnection: false)), "one probe at a time")
        XCTAssertTrue(bounds.finish(probe, answered: false), "a failed probe opens it again")
        XCTAssertTrue(isRefused(bounds.admit(appId: "a", kind: "before_token", holdsConnection: false)))

        clock.nanoseconds += 30_000_000_000
        let second = try XCTUnwrap(ticket(bounds.admit(appId: "a", kind: "before_token", holdsConnection: false)))
        XCTAssertFalse(bounds.finish(second, answered: true))
        for _ in 0..<2 {
            let call = try XCTUnwrap(ticket(bounds.admit(appId: "a", kind: "before_token", holdsConnection: false)))
            XCTAssertFalse(bounds.finish(call, answered: false), "closed: counting from zero again")
        }
    }

    func testACallBeyondItsAppsShareWaitsForASpotAndFewWaitSo() throws {
        let bounds = fairness(.init(perApp: 1, total: 8, holdingConnection: 1, failuresToOpen: 5, openSeconds: 30))
        let first = try XCTUnwrap(ticket(bounds.admit(appId: "a", kind: "before_token", holdsConnection: false)))
        let admitted = expectation(description: "the waiting call got the spot")
        Thread.detachNewThread {
            if case .go = bounds.admit(appId: "a", kind: "before_token", holdsConnection: false, waitMilliseconds: 5000) {
                admitted.fulfill()
            }
        }
        Thread.sleep(forTimeInterval: 0.2)
        // One waits already (as many as the app's share): the next is refused at once.
        XCTAssertTrue(isRefused(bounds.admit(appId: "a", kind: "before_token", holdsConnection: false, waitMilliseconds: 5000)))
        bounds.finish(first, answered: true)
        wait(for: [admitted], timeout: 5)
        // A wait that finds no spot in its time is refused.
        XCTAssertTrue(isRefused(bounds.admit(appId: "a", kind: "before_token", holdsConnection: false, waitMilliseconds: 50)))
    }

    func testAWaitOutsideGivesTheSlotBackAndTakesItAgain() {
        let slots = WorkerSlots(count: 1)
        let other = expectation(description: "another command ran while the first waited")
        slots.run {
            WorkerSlots.waitingOutside {
                Thread.detachNewThread { slots.run { other.fulfill() } }
                wait(for: [other], timeout: 5)
            }
        }
    }
}
