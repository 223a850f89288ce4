import XCTest
@testable import IdentityGateway
@testable import IdentityKit

final class ConnectionGuardTests: XCTestCase {
    /// A clock the test moves and a record of the sockets cut.
    private final class World: @unchecked Sendable {
        let clock = Locked<UInt64>(1_000_000_000)
        let cut = Locked<[Int32]>([])

        func advance(seconds: Double) { clock.withLock { $0 += UInt64(seconds * 1e9) } }
        var cutSockets: [Int32] { cut.withLock { $0 } }
    }

    private func makeGuard(_ world: World, perIP: Int = 2, trusted: String = "10.0.0.0/8") throws -> ConnectionGuard {
        ConnectionGuard(limits: ConnectionLimits(maxConnections: 100, maxConnectionsPerIP: perIP,
                                                 headerTimeoutSeconds: 10, bodyTimeoutSeconds: 30),
                        trusted: try TrustedProxies(parsing: trusted),
                        now: { world.clock.withLock { $0 } },
                        cutSocket: { fd in world.cut.withLock { $0.append(fd) } })
    }

    func testPerIPLimitCutsTheConnectionOverIt() throws {
        let world = World()
        let guardian = try makeGuard(world)
        XCTAssertTrue(guardian.opened(1, fd: 11, peer: "198.51.100.1"))
        XCTAssertTrue(guardian.opened(2, fd: 12, peer: "198.51.100.1"))
        XCTAssertFalse(guardian.opened(3, fd: 13, peer: "198.51.100.1"))
        XCTAssertEqual(world.cutSockets, [13])
        // Another address is unaffected.
        XCTAssertTrue(guardian.opened(4, fd: 14, peer: "198.51.100.2"))
        // Closing frees a place.
        guardian.closed(3)
        guardian.closed(1)
        XCTAssertEqual(guardian.openCount(peer: "198.51.100.1"), 1)
        XCTAssertTrue(guardian.opened(5, fd: 15, peer: "198.51.100.1"))
        XCTAssertEqual(guardian.reap(), ConnectionGuard.Tally(refused: 1, cut: 0))
    }

    func testTrustedProxiesAreExemptFromThePerIPLimit() throws {
        let world = World()
        let guardian = try makeGuard(world)
        for key in 1...50 {
            XCTAssertTrue(guardian.opened(key, fd: Int32(key), peer: "10.0.0.1"))
        }
        XCTAssertEqual(world.cutSockets, [])
        XCTAssertEqual(guardian.openCount, 50)
    }

    func testHeaderDeadlineIsNotResetByActivity() throws {
        let world = World()
        let guardian = try makeGuard(world)
        guardian.opened(1, fd: 11, peer: "198.51.100.1")
        world.advance(seconds: 9.5)
        guardian.reap()
        XCTAssertEqual(world.cutSockets, [])
        world.advance(seconds: 0.5)
        XCTAssertEqual(guardian.reap().cut, 1)
        XCTAssertEqual(world.cutSockets, [11])
        // Cut once only, even while MHD has not closed it yet.
        world.advance(seconds: 5)
        XCTAssertEqual(guardian.reap().cut, 0)
        XCTAssertEqual(world.cutSockets, [11])
    }

    func testBodyDeadlineStartsAtTheEndOfTheHeaders() throws {
        let world = World()
        let guardian = try makeGuard(world)
        guardian.opened(1, fd: 11, peer: "198.51.100.1")
        world.advance(seconds: 9)
        guardian.headersComplete(1)
        world.advance(seconds: 29)
        guardian.reap()
        XCTAssertEqual(world.cutSockets, [])
        world.advance(seconds: 1)
        guardian.reap()
        XCTAssertEqual(world.cutSockets, [11])
    }

    func testSuspendedConnectionsHaveNoDeadlineAndKeepAliveRestartsTheHeaderClock() throws {
        let world = World()
        let guardian = try makeGuard(world)
        guardian.opened(1, fd: 11, peer: "198.51.100.1")
        guardian.headersComplete(1)
        guardian.suspended(1)
        world.advance(seconds: 600)
        guardian.reap()
        XCTAssertEqual(world.cutSockets, [])
        guardian.responding(1)
        world.advance(seconds: 1)
        guardian.requestEnded(1)
        world.advance(seconds: 9.9)
        guardian.reap()
        XCTAssertEqual(world.cutSockets, [])
        world.advance(seconds: 0.1)
        guardian.reap()
        XCTAssertEqual(world.cutSockets, [11])
    }

    func testClosedConnectionsAreForgotten() throws {
        let world = World()
        let guardian = try makeGuard(world)
        guardian.opened(1, fd: 11, peer: "198.51.100.1")
        guardian.closed(1)
        guardian.closed(1)
        guardian.headersComplete(1)  // a late event for a closed connection changes nothing
        world.advance(seconds: 100)
        guardian.reap()
        XCTAssertEqual(world.cutSockets, [])
        XCTAssertEqual(guardian.openCount, 0)
        XCTAssertEqual(guardian.openCount(peer: "198.51.100.1"), 0)
    }

    // MARK: - Draining

    /// Connections 1…5 at each phase: awaiting its first request, reading, waiting for a
    /// worker, writing, idle between two requests.
    private func onePerPhase(_ guardian: ConnectionGuard) {
        for key in 1...5 { guardian.opened(key, fd: Int32(10 + key), peer: "198.51.100.\(key)") }
        guardian.headersComplete(2)
        guardian.headersComplete(3)
        guardian.suspended(3)
        guardian.headersComplete(4)
        guardian.responding(4)
        guardian.headersComplete(5)
        guardian.responding(5)
        guardian.requestEnded(5)
    }

    func testDrainingCutsIdleKeepAliveConnectionsNowAndTheOthersAsTheirRequestEnds() throws {
        let world = World()
        let guardian = try makeGuard(world, perIP: 10)
        onePerPhase(guardian)
        XCTAssertEqual(guardian.phases(), [.awaitingRequest: 1, .reading: 1, .waitingForWorker: 1, .writing: 1, .idle: 1])
        XCTAssertEqual(guardian.beginDraining(), 1)
        XCTAssertEqual(world.cutSockets, [15])
        // The answer being written finishes; then its connection goes too.
        guardian.requestEnded(4)
        XCTAssertEqual(world.cutSockets, [15, 14])
        // Before draining, an ended request leaves its connection open (keep-alive).
        XCTAssertEqual(guardian.openedCount, 5)
    }

    func testAtTheDeadlineOnlyConnectionsNoAnswerIsComingForAreCut() throws {
        let world = World()
        let guardian = try makeGuard(world, perIP: 10)
        onePerPhase(guardian)
        guardian.beginDraining()
        // Awaiting a request and reading are cut; waiting for a worker (answered 503 by the
        // server) and writing are not; the idle one was cut already, and is not cut twice.
        XCTAssertEqual(guardian.cutUnanswered(), 2)
        XCTAssertEqual(world.cutSockets.sorted(), [11, 12, 15])
        XCTAssertEqual(guardian.cutUnanswered(), 0)
    }

    func testKeepAliveIsUntouchedWithoutADrain() throws {
        let world = World()
        let guardian = try makeGuard(world, perIP: 10)
        onePerPhase(guardian)
        guardian.requestEnded(4)
        XCTAssertEqual(world.cutSockets, [])
        XCTAssertEqual(guardian.phases()[.idle], 2)
    }
}
