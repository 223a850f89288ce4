import Foundation

/// The connections suspended while a worker answers, each resumed exactly once: by its answer,
/// or, when the gateway stops and the answer is too late, by a 503. libmicrohttpd forbids
/// stopping a daemon while a connection is suspended, and resuming a connection twice (or after
/// it is gone) touches freed memory, so every resume goes through here.
final class SuspendedConnections: @unchecked Sendable {
    /// One suspension. A connection (keep-alive) may be suspended again after it is resumed;
    /// the serial tells a late answer for an earlier request from the current one.
    struct Ticket: Equatable {
        let key: Int
        let serial: UInt64
    }

    private struct Entry {
        let serial: UInt64
        let requestId: String
        /// Hands the answer to the connection and resumes it.
        let deliver: @Sendable (HTTPResponse) -> Void
    }

    // Everything below is guarded by `lock`.
    private let lock = NSLock()
    private var entries: [Int: Entry] = [:]
    private var serial: UInt64 = 0
    private var closed = false

    /// Registers connection `key` and runs `suspend` (MHD_suspend_connection) under the lock,
    /// so a concurrent `resumeAll` either sees the connection suspended or refuses it here.
    /// Returns nil once `resumeAll` has run: the caller answers at once instead.
    func suspend(_ key: Int, requestId: String, deliver: @escaping @Sendable (HTTPResponse) -> Void,
                 suspend: () -> Void) -> Ticket? {
        lock.lock()
        defer { lock.unlock() }
        guard !closed else { return nil }
        serial &+= 1
        entries[key] = Entry(serial: serial, requestId: requestId, deliver: deliver)
        suspend()
        return Ticket(key: key, serial: serial)
    }

    /// The answer for `ticket`. False when that suspension was already resumed (by
    /// `resumeAll`): the answer is dropped.
    @discardableResult
    func resume(_ ticket: Ticket, with response: HTTPResponse) -> Bool {
        lock.lock()
        guard let entry = entries[ticket.key], entry.serial == ticket.serial else {
            lock.unlock()
            return false
        }
        entries[ticket.key] = nil
        lock.unlock()
        // Outside the lock: MHD_resume_connection takes MHD's own lock.
        entry.deliver(response)
        return true
    }

    /// Resumes every connection still suspended with `answer(requestId)` and refuses further
    /// suspensions. Returns how many were resumed.
    func resumeAll(with answer: (String) -> HTTPResponse) -> Int {
        lock.lock()
        closed = true
        let pending = entries
        entries = [:]
        lock.unlock()
        for entry in pending.values { entry.deliver(answer(entry.requestId)) }
        return pending.count
    }

    var count: Int {
        lock.lock()
        defer { lock.unlock() }
        return entries.count
    }
}
