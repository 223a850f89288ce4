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
    /// How many connections each thread holds now, by thread: a thread that asks for a second
    /// while it holds one waits on itself once every connection is held that way (the pool's size
    /// in commands, each holding one and wanting another), so it is reported (`nestedAcquire`).
    private let holders = Locked<[UInt: Int]>([:])

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

    /// A pool of its own on the same database, for work that must write while it holds a
    /// connection of this one (an audit row that stays when the work it describes rolls back):
    /// taking from another pool cannot wait on itself.
    public func companion(size: Int) -> PGPool { PGPool(url: url, size: size, acquireTimeout: acquireTimeout) }

    /// Lends a connection to `body`. A connection left in a failed state is dropped, not reused.
    public func withConnection<R>(_ body: (PGConnection) throws -> R) throws -> R {
        let thread = Self.currentThread()
        if holders.withLock({ $0[thread, default: 0] }) > 0 { Self.nestedAcquire() }
        guard slots.wait(timeout: .now() + acquireTimeout) == .success else {
            throw StoreError.unavailable("no database connection free within \(acquireTimeout) s")
        }
        holders.withLock { $0[thread, default: 0] += 1 }
        defer {
            holders.withLock { held in
                let left = held[thread, default: 1] - 1
                held[thread] = left > 0 ? left : nil
            }
            slots.signal()
        }
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

    /// A thread holding a connection of this pool asked it for another: under load every
    /// connection can be held by such a thread, each waiting for the others until
    /// `acquireTimeout`. Work that needs a second connection while it holds one takes it from
    /// a pool of its own (or uses the one it holds); the end-to-end tests fail on this line.
    private static func nestedAcquire() {
        ServiceMetrics.dbPoolNestedAcquires.inc()
        Log.error(nestedAcquireMessage, ["stack": Thread.callStackSymbols.prefix(12).joined(separator: " | ")])
    }

    /// What the end-to-end tests look for in every process's log.
    public static let nestedAcquireMessage = "a thread holding a database connection asked the same pool for another"

    private static func currentThread() -> UInt {
        #if canImport(Darwin)
        UInt(bitPattern: pthread_self())
        #else
        UInt(pthread_self())
        #endif
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
