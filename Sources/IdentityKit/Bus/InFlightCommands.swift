import Foundation

/// The commands a consumer is running, and whether it still takes new ones. A stopping worker
/// hands back every command it has not started (the broker gives it to another worker at
/// once, well before its caller's deadline) and waits, for a bounded time, for the ones it
/// has started to finish and be acked: running a half-done command again elsewhere would be
/// safe but slower, and a command finished twice answers its caller only once.
final class InFlightCommands: @unchecked Sendable {
    /// What a drain saw, for its log line.
    struct Tally: Equatable {
        /// Run since the consumer started, these included.
        var handled = 0
        /// Running when the drain began.
        var running = 0
        /// Finished while draining.
        var finished = 0
        /// Not started: handed back to the broker.
        var handedBack = 0
        /// Still running when the wait ended (left unacked: the broker requeues them when the
        /// connection closes).
        var abandoned = 0
    }

    // Everything below is guarded by `condition`.
    private let condition = NSCondition()
    private var running = 0
    private var stopping = false
    private var tally = Tally()

    /// True when a delivered command may run; false once stopping (hand it back instead).
    func begin() -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard !stopping else {
            tally.handedBack += 1
            return false
        }
        running += 1
        tally.handled += 1
        return true
    }

    /// A command that `begin` let run is done (its reply and ack are queued).
    func end() {
        condition.lock()
        defer { condition.unlock() }
        running -= 1
        if stopping {
            tally.finished += 1
            if running == 0 { condition.broadcast() }
        }
    }

    var isStopping: Bool {
        condition.lock()
        defer { condition.unlock() }
        return stopping
    }

    /// Refuses every command not yet begun, from now on.
    func stopAccepting() {
        condition.lock()
        defer { condition.unlock() }
        guard !stopping else { return }
        stopping = true
        tally.running = running
    }

    /// Waits until no command runs or `timeout` seconds pass; returns the tally.
    func waitUntilIdle(timeout: Double) -> Tally {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        defer { condition.unlock() }
        while running > 0, condition.wait(until: deadline) {}
        var result = tally
        result.abandoned = running
        return result
    }
}
