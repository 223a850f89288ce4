import Foundation
import XCTest
@testable import IdentityKit

/// A stopping consumer refuses what it has not started and waits, bounded, for what it has.
final class InFlightCommandsTests: XCTestCase {
    func testAfterStopNewCommandsAreHandedBackAndRunningOnesAreWaitedFor() {
        let commands = InFlightCommands()
        XCTAssertTrue(commands.begin())
        XCTAssertTrue(commands.begin())
        commands.end()
        commands.stopAccepting()
        XCTAssertTrue(commands.isStopping)
        XCTAssertFalse(commands.begin())
        let finisher = DispatchQueue(label: "finisher")
        finisher.asyncAfter(deadline: .now() + 0.1) { commands.end() }
        let started = Date()
        let tally = commands.waitUntilIdle(timeout: 5)
        XCTAssertLessThan(Date().timeIntervalSince(started), 2)
        XCTAssertEqual(tally, InFlightCommands.Tally(handled: 2, running: 1, finished: 1, handedBack: 1, abandoned: 0))
    }

    func testTheWaitIsBoundedAndReportsWhatItAbandons() {
        let commands = InFlightCommands()
        XCTAssertTrue(commands.begin())
        commands.stopAccepting()
        let started = Date()
        let tally = commands.waitUntilIdle(timeout: 0.2)
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(started), 0.2)
        XCTAssertEqual(tally.abandoned, 1)
        XCTAssertEqual(tally.finished, 0)
    }

    func testAnIdleConsumerStopsAtOnce() {
        let commands = InFlightCommands()
        commands.stopAccepting()
        let started = Date()
        XCTAssertEqual(commands.waitUntilIdle(timeout: 5), InFlightCommands.Tally())
        XCTAssertLessThan(Date().timeIntervalSince(started), 0.1)
    }
}
