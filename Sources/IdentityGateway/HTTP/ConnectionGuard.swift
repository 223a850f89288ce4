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
final class ConnectionGuard: @unchecked Sendable {
    typealias Key = Int

    private struct Entry {
        let fd: Int32
        let peer: String
        /// Counted against the peer's limit (false for trusted proxies).
        let counted: Bool
        /// Monotonic nanoseconds; nil while a worker answers (the command has its own deadline).
        var deadline: UInt64?
        var cut = false
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
    func headersComplete(_ key: Key) { setDeadline(key, seconds: limits.bodyTimeoutSeconds) }

    /// A worker is answering: no deadline until the answer comes.
    func suspended(_ key: Key) { setDeadline(key, seconds: nil) }

    /// The answer is being written.
    func responding(_ key: Key) { setDeadline(key, seconds: limits.bodyTimeoutSeconds) }

    /// A request ended; on a keep-alive connection the next header block is due in time.
    func requestEnded(_ key: Key) { setDeadline(key, seconds: limits.headerTimeoutSeconds) }

    private func setDeadline(_ key: Key, seconds: Int?) {
        let deadline = seconds.map { now() &+ Self.nanoseconds($0) }
        lock.lock()
        defer { lock.unlock() }
        entries[key]?.deadline = deadline
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
            cutSocket(entry.fd)
            entries[key]?.cut = true
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
                Log.info("connections cut", ["over_ip_limit": String(tally.refused),
                                             "past_deadline": String(tally.cut),
                                             "open": String(openCount)])
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

    var openCount: Int {
        lock.lock()
        defer { lock.unlock() }
        return entries.count
    }

    func openCount(peer: String) -> Int {
        lock.lock()
        defer { lock.unlock() }
        return perPeer[peer] ?? 0
    }

    private static func nanoseconds(_ seconds: Int) -> UInt64 { UInt64(seconds) * 1_000_000_000 }
}
