import Foundation
import IdentityKit

/// Every open connection with its socket, peer and deadline: enforces the per-IP connection
/// limit and cuts connections that miss their header or body deadline.
///
/// libmicrohttpd only has an idle timeout, which a client resets with one byte at a time, and
/// a per-IP limit that cannot spare our own proxies. So the server tells this guard when a
/// connection opens and closes (`MHD_OPTION_NOTIFY_CONNECTION`) and when a request moves on,
/// and a reaper cuts what is overdue with `shutdown(fd, SHUT_RDWR)`: MHD then reads end-of-file
/// and closes and frees the connection itself, on its own thread. The cut happens under the
/// same lock that `closed` takes, and MHD reports a connection closed before it closes the
/// socket, so the descriptor cut is never one already reused by another connection.
///
/// When the gateway stops it also knows where each connection stands, so the drain can close
/// idle keep-alive connections at once and, at its deadline, those no answer is coming for.
final class ConnectionGuard: @unchecked Sendable {
    typealias Key = Int

    /// Where a connection stands.
    enum Phase: Equatable {
        /// Accepted; its first header block is not complete yet.
        case awaitingRequest
        /// The header block is complete: the body is read and the request dispatched.
        case reading
        /// Suspended while a worker answers.
        case waitingForWorker
        /// The answer is queued and being written.
        case writing
        /// Keep-alive, between two requests.
        case idle
    }

    private struct Entry {
        let fd: Int32
        let peer: String
        /// Counted against the peer's limit (false for trusted proxies).
        let counted: Bool
        /// Monotonic nanoseconds; nil while a worker answers (the command has its own deadline).
        var deadline: UInt64?
        var cut = false
        var phase = Phase.awaitingRequest
    }

    /// What the reaper did since the last report, for one log line a second at most.
    struct Tally: Equatable {
        var refused = 0
        var cut = 0
    }

    private let limits: ConnectionLimits
    private let trusted: TrustedProxies
    private let now: @Sendable () -> UInt64
    private let cutSocket: @Sendable (Int32) -> Void
    // Everything below is guarded by `lock`.
    private let lock = NSLock()
    private var entries: [Key: Entry] = [:]
    private var perPeer: [String: Int] = [:]
    private var tally = Tally()
    private var reaper: DispatchSourceTimer?
    /// Set when the gateway stops: idle keep-alive connections are cut from then on.
    private var draining = false
    /// Connections ever opened, so a drain can tell when those it handed to MHD have arrived.
    private var openedTotal = 0

    /// `now` and `cutSocket` are injectable for tests; the server passes the monotonic clock
    /// and `shutdown(2)`.
    init(limits: ConnectionLimits, trusted: TrustedProxies,
         now: @escaping @Sendable () -> UInt64 = { DispatchTime.now().uptimeNanoseconds },
         cutSocket: @escaping @Sendable (Int32) -> Void) {
        self.limits = limits
        self.trusted = trusted
        self.now = now
        self.cutSocket = cutSocket
    }

    // MARK: - Events from the server

    /// A connection was accepted. Over its peer's limit it is cut at once and false returned.
    @discardableResult
    func opened(_ key: Key, fd: Int32, peer: String) -> Bool {
        let counted = !trusted.containsPeer(peer)
        let deadline = now() &+ Self.nanoseconds(limits.headerTimeoutSeconds)
        lock.lock()
        defer { lock.unlock() }
        var entry = Entry(fd: fd, peer: peer, counted: counted, deadline: deadline)
        var accepted = true
        openedTotal += 1
        if counted {
            let open = (perPeer[peer] ?? 0) + 1
            perPeer[peer] = open
            if open > limits.maxConnectionsPerIP {
                cutSocket(fd)
                entry.cut = true
                tally.refused += 1
                accepted = false
            }
        }
        entries[key] = entry
        return accepted
    }

    /// The connection is gone (MHD calls this before closing the socket).
    func closed(_ key: Key) {
        lock.lock()
        defer { lock.unlock() }
        guard let entry = entries.removeValue(forKey: key) else { return }
        if entry.counted, let open = perPeer[entry.peer] {
            if open <= 1 { perPeer[entry.peer] = nil } else { perPeer[entry.peer] = open - 1 }
        }
    }

    /// The header block is complete: the body deadline starts.
    func headersComplete(_ key: Key) { setDeadline(key, seconds: limits.bodyTimeoutSeconds, phase: .reading) }

    /// A worker is answering: no deadline until the answer comes.
    func suspended(_ key: Key) { setDeadline(key, seconds: nil, phase: .waitingForWorker) }

    /// The answer is being written.
    func responding(_ key: Key) { setDeadline(key, seconds: limits.bodyTimeoutSeconds, phase: .writing) }

    /// A request ended; on a keep-alive connection the next header block is due in time. While
    /// draining the connection is cut instead: its answer is written, and a next request would
    /// only be refused.
    func requestEnded(_ key: Key) {
        setDeadline(key, seconds: limits.headerTimeoutSeconds, phase: .idle, cutWhenDraining: true)
    }

    private func setDeadline(_ key: Key, seconds: Int?, phase: Phase, cutWhenDraining: Bool = false) {
        let deadline = seconds.map { now() &+ Self.nanoseconds($0) }
        lock.lock()
        defer { lock.unlock() }
        entries[key]?.deadline = deadline
        entries[key]?.phase = phase
        if cutWhenDraining && draining { cut(key) }
    }

    /// Cuts one connection (once); call with `lock` held.
    private func cut(_ key: Key) {
        guard let entry = entries[key], !entry.cut else { return }
        cutSocket(entry.fd)
        entries[key]?.cut = true
    }

    // MARK: - Draining (the gateway is stopping)

    /// From now on idle keep-alive connections are cut: those idle now at once, the others as
    /// their request ends. Returns how many were cut now.
    @discardableResult
    func beginDraining() -> Int {
        lock.lock()
        defer { lock.unlock() }
        draining = true
        let idle = entries.filter { !$0.value.cut && $0.value.phase == .idle }.map(\.key)
        idle.forEach(cut)
        return idle.count
    }

    /// At the drain's deadline: cuts every connection no answer is on its way to (a header
    /// block or a body still arriving, or idle); those waiting for a worker are answered 503 by
    /// the server and those writing are left to finish. Returns how many were cut.
    @discardableResult
    func cutUnanswered() -> Int {
        lock.lock()
        defer { lock.unlock() }
        let unanswered = entries.filter { entry in
            !entry.value.cut && [.awaitingRequest, .reading, .idle].contains(entry.value.phase)
        }.map(\.key)
        unanswered.forEach(cut)
        return unanswered.count
    }

    /// Open connections by phase (cut ones not yet closed by MHD included), for the drain's log.
    func phases() -> [Phase: Int] {
        lock.lock()
        defer { lock.unlock() }
        return entries.values.reduce(into: [:]) { counts, entry in counts[entry.phase, default: 0] += 1 }
    }

    // MARK: - Reaping

    /// Cuts every connection past its deadline; returns and resets the tally.
    @discardableResult
    func reap() -> Tally {
        let current = now()
        lock.lock()
        defer { lock.unlock() }
        for (key, entry) in entries where !entry.cut {
            guard let deadline = entry.deadline, deadline <= current else { continue }
            cut(key)
            tally.cut += 1
        }
        let result = tally
        tally = Tally()
        return result
    }

    /// Reaps once a second until `stop`.
    func start() {
        let timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "identity.http.connection-guard"))
        timer.schedule(deadline: .now() + 1, repeating: 1, leeway: .milliseconds(100))
        timer.setEventHandler { [weak self] in
            guard let self else { return }
            let tally = reap()
            if tally.refused > 0 || tally.cut > 0 {
                Log.info("connections cut", ["over_ip_limit": tally.refused,
                                             "past_deadline": tally.cut,
                                             "open": openCount])
            }
        }
        lock.lock()
        reaper = timer
        lock.unlock()
        timer.resume()
    }

    func stop() {
        lock.lock()
        let timer = reaper
        reaper = nil
        lock.unlock()
        timer?.cancel()
    }

    // MARK: - Introspection (logs, tests)

    /// `identity_http_open_connections`, read from `guarded` at each scrape, and the limit it holds to.
    static func exportGauges(_ guarded: ConnectionGuard, maxConnections: Int) {
        ServiceMetrics.httpMaxConnections.set(Double(maxConnections))
        Metrics.shared.onCollect { [weak guarded] in
            guard let guarded else { return }
            ServiceMetrics.httpOpenConnections.set(Double(guarded.openCount))
        }
    }

    var openCount: Int {
        lock.lock()
        defer { lock.unlock() }
        return entries.count
    }

    /// Connections opened since the guard was made.
    var openedCount: Int {
        lock.lock()
        defer { lock.unlock() }
        return openedTotal
    }

    func openCount(peer: String) -> Int {
        lock.lock()
        defer { lock.unlock() }
        return perPeer[peer] ?? 0
    }

    private static func nanoseconds(_ seconds: Int) -> UInt64 { UInt64(seconds) * 1_000_000_000 }
}
