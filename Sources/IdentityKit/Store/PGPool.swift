import Foundation

/// A fixed-size pool of connections shared by a process's threads. Connections are opened
/// lazily and reopened after a database restart; a caller that cannot get one within
/// `acquireTimeout` gets `StoreError.unavailable` (503), never an endless wait.
public final class PGPool: Sendable {
    private let url: String
    private let idle = Locked<[SendableConnection]>([])
    private let slots: DispatchSemaphore
    private let acquireTimeout: Double
    private let size: Int
    /// Connections lent out now (for the pool's gauges).
    private let lent = Locked(0)

    public init(url: String, size: Int, acquireTimeout: Double = 5) {
        self.url = url
        self.slots = DispatchSemaphore(value: size)
        self.acquireTimeout = acquireTimeout
        self.size = size
        Self.live.withLock { pools in
            pools.removeAll { $0.pool == nil }
            pools.append(WeakPool(pool: self))
        }
    }

    /// The pools of this process, for `identity_db_pool_connections_*` (one per process in
    /// practice; summed if there are more).
    private static let live = Locked<[WeakPool]>([])

    /// Connections lent out, waiting idle, and the most that may be open, over the process's pools.
    public static func usage() -> (inUse: Int, idle: Int, size: Int) {
        let pools = live.withLock { $0.compactMap(\.pool) }
        return pools.reduce(into: (inUse: 0, idle: 0, size: 0)) { total, pool in
            total.inUse += pool.lent.withLock { $0 }
            total.idle += pool.idle.withLock { $0.count }
            total.size += pool.size
        }
    }

    /// Lends a connection to `body`. A connection left in a failed state is dropped, not reused.
    public func withConnection<R>(_ body: (PGConnection) throws -> R) throws -> R {
        guard slots.wait(timeout: .now() + acquireTimeout) == .success else {
            throw StoreError.unavailable("no database connection free within \(acquireTimeout) s")
        }
        defer { slots.signal() }
        let connection = try idle.withLock { $0.popLast() }?.connection ?? PGConnection(url: url)
        // Counted as lent only once out of `idle`, and no longer before it is back (`release`):
        // a scrape never sees one connection in both.
        lent.withLock { $0 += 1 }
        do {
            try connection.ensureConnected()
            let result = try body(connection)
            release(connection)
            return result
        } catch {
            release(connection)
            throw error
        }
    }

    /// Runs `body` in a transaction: committed when it returns, rolled back when it throws.
    public func transaction<R>(_ body: (PGConnection) throws -> R) throws -> R {
        try withConnection { try transactionOn($0, body) }
    }

    /// A transaction on a connection the caller already holds (a run of short transactions on
    /// one connection, as the retention purge does under its session lock).
    package func transactionOn<R>(_ connection: PGConnection, _ body: (PGConnection) throws -> R) throws -> R {
        try connection.execute("BEGIN")
        do {
            let result = try body(connection)
            try connection.execute("COMMIT")
            return result
        } catch {
            try? connection.execute("ROLLBACK")
            throw error
        }
    }

    private func release(_ connection: PGConnection) {
        lent.withLock { $0 -= 1 }
        guard connection.isHealthy else { return }
        idle.withLock { $0.append(SendableConnection(connection: connection)) }
    }
}

private struct WeakPool: @unchecked Sendable {
    weak var pool: PGPool?
}

/// A connection moves between threads only through the pool's lock, one owner at a time.
private struct SendableConnection: @unchecked Sendable {
    let connection: PGConnection
}
