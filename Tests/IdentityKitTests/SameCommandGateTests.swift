@testable import IdentityKit
import XCTest

/// `SameCommandGate`: a second copy of a command (same message id) waits until the first is
/// over; other commands do not wait.
final class SameCommandGateTests: XCTestCase {
    func testACopyWaitsForTheFirstAndOthersDoNot() {
        let gate = SameCommandGate()
        let order = Locked<[String]>([])
        let firstStarted = DispatchSemaphore(value: 0)
        let releaseFirst = DispatchSemaphore(value: 0)
        let done = DispatchGroup()
        done.enter()
        Thread.detachNewThread {
            gate.run("msg-1") {
                order.withLock { $0.append("first started") }
                firstStarted.signal()
                releaseFirst.wait()
                order.withLock { $0.append("first ended") }
            }
            done.leave()
        }
        firstStarted.wait()
        done.enter()
        Thread.detachNewThread {
            gate.run("msg-1") { order.withLock { $0.append("copy ran") } }
            done.leave()
        }
        // Another command runs at once, while the copy waits.
        gate.run("msg-2") { order.withLock { $0.append("other ran") } }
        Thread.sleep(forTimeInterval: 0.2)
        XCTAssertEqual(order.withLock { $0 }, ["first started", "other ran"])
        releaseFirst.signal()
        XCTAssertEqual(done.wait(timeout: .now() + 5), .success)
        XCTAssertEqual(order.withLock { $0 }, ["first started", "other ran", "first ended", "copy ran"])
    }
}
