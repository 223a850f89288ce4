import XCTest
@testable import IdentityGateway
@testable import IdentityKit

/// Every suspended connection is resumed exactly once: by its answer or by the drain's 503,
/// whichever comes first, and never after the drain has refused further suspensions.
final class SuspendedConnectionsTests: XCTestCase {
    /// What each connection was resumed with, and how many times it was suspended.
    private final class Record: @unchecked Sendable {
        let resumed = Locked<[Int: [Int]]>([:])
        let suspended = Locked<[Int: Int]>([:])

        func deliver(_ key: Int) -> @Sendable (HTTPResponse) -> Void {
            { response in self.resumed.withLock { $0[key, default: []].append(response.status) } }
        }
        func suspend(_ key: Int) { suspended.withLock { $0[key, default: 0] += 1 } }
        func statuses(_ key: Int) -> [Int] { resumed.withLock { $0[key] ?? [] } }
    }

    func testAnAnswerResumesItsConnectionOnce() throws {
        let record = Record()
        let suspensions = SuspendedConnections()
        let ticket = try XCTUnwrap(suspensions.suspend(1, requestId: "r1", deliver: record.deliver(1)) { record.suspend(1) })
        XCTAssertEqual(record.suspended.withLock { $0[1] }, 1)
        XCTAssertEqual(suspensions.count, 1)
        XCTAssertTrue(suspensions.resume(ticket, with: .noContent))
        XCTAssertFalse(suspensions.resume(ticket, with: .noContent))
        XCTAssertEqual(record.statuses(1), [204])
        XCTAssertEqual(suspensions.count, 0)
    }

    func testTheDrainAnswersWhatIsStillWaitingAndALateAnswerIsDropped() throws {
        let record = Record()
        let suspensions = SuspendedConnections()
        let early = try XCTUnwrap(suspensions.suspend(1, requestId: "r1", deliver: record.deliver(1)) {})
        let late = try XCTUnwrap(suspensions.suspend(2, requestId: "r2", deliver: record.deliver(2)) {})
        XCTAssertTrue(suspensions.resume(early, with: .noContent))
        var asked: [String] = []
        XCTAssertEqual(suspensions.resumeAll { requestId in
            asked.append(requestId)
            return .problem(.unavailable, requestId: requestId)
        }, 1)
        XCTAssertEqual(asked, ["r2"])
        XCTAssertFalse(suspensions.resume(late, with: .noContent))
        XCTAssertEqual(record.statuses(1), [204])
        XCTAssertEqual(record.statuses(2), [503])
    }

    func testNoSuspensionAfterTheDrainHasAnswered() {
        let record = Record()
        let suspensions = SuspendedConnections()
        XCTAssertEqual(suspensions.resumeAll { .problem(.unavailable, requestId: $0) }, 0)
        XCTAssertNil(suspensions.suspend(3, requestId: "r3", deliver: record.deliver(3)) { record.suspend(3) })
        XCTAssertNil(record.suspended.withLock { $0[3] }, "the connection must not be suspended")
    }

    func testALateAnswerForAnEarlierRequestDoesNotResumeTheNextOne() throws {
        // Keep-alive: the same connection suspended twice; the first answer was given, then a
        // stray duplicate of it arrives while the second request waits.
        let record = Record()
        let suspensions = SuspendedConnections()
        let first = try XCTUnwrap(suspensions.suspend(5, requestId: "a", deliver: record.deliver(5)) {})
        XCTAssertTrue(suspensions.resume(first, with: .noContent))
        let second = try XCTUnwrap(suspensions.suspend(5, requestId: "b", deliver: record.deliver(5)) {})
        XCTAssertFalse(suspensions.resume(first, with: .noContent))
        XCTAssertEqual(suspensions.count, 1)
        XCTAssertTrue(suspensions.resume(second, with: .json(.object([:]))))
        XCTAssertEqual(record.statuses(5), [204, 200])
    }

    func testConcurrentAnswersAndDrainResumeEachConnectionExactlyOnce() {
        let record = Record()
        let suspensions = SuspendedConnections()
        let tickets = (0..<500).compactMap { key in
            suspensions.suspend(key, requestId: "r\(key)", deliver: record.deliver(key)) {}
        }
        DispatchQueue.concurrentPerform(iterations: tickets.count + 1) { index in
            if index == tickets.count {
                _ = suspensions.resumeAll { .problem(.unavailable, requestId: $0) }
            } else {
                suspensions.resume(tickets[index], with: .noContent)
            }
        }
        for key in 0..<500 {
            XCTAssertEqual(record.statuses(key).count, 1, "connection \(key)")
        }
    }
}
