/// Outbox rows the broker refused (`basic.nack`: a bound queue is full with
/// `x-overflow: reject-publish`, or the broker is short of resources), each held back for a
/// delay that doubles with every refusal. The rows stay in the outbox, but a refusing queue
/// then costs one try per row per delay rather than a tight loop, and the rows behind them keep
/// flowing instead of waiting behind the same refused batch. Kept in memory: a restarted relay
/// simply tries them again at once.
struct RefusedOutboxRows {
    private struct Hold {
        var retryAt: Double
        var delay: Double
    }

    private var holds: [String: Hold] = [:]
    let firstDelay: Double
    let maximumDelay: Double

    init(firstDelay: Double = 0.5, maximumDelay: Double = 15) {
        self.firstDelay = firstDelay
        self.maximumDelay = maximumDelay
    }

    var isEmpty: Bool { holds.isEmpty }

    /// Row ids the next batch leaves out: their delay has not passed at `now` (seconds).
    func heldBack(now: Double) -> [String] {
        holds.compactMap { $0.value.retryAt > now ? $0.key : nil }.sorted()
    }

    /// The broker refused these rows: hold each back for its next delay. Returns the longest
    /// delay given, for the log.
    @discardableResult
    mutating func refused(_ ids: [String], now: Double) -> Double {
        var longest = 0.0
        for id in ids {
            let delay = holds[id].map { min($0.delay * 2, maximumDelay) } ?? firstDelay
            holds[id] = Hold(retryAt: now + delay, delay: delay)
            longest = max(longest, delay)
        }
        return longest
    }

    /// The broker took these rows: nothing to hold back any more.
    mutating func delivered(_ ids: [String]) {
        for id in ids { holds[id] = nil }
    }

    /// Forgets holds whose time is long past without the row coming back (another relay
    /// delivered it), so the map does not grow without end.
    mutating func forgetStale(now: Double) {
        holds = holds.filter { $0.value.retryAt > now - 2 * maximumDelay }
    }
}
