import Foundation

/// A value behind a lock. A plain pthread mutex (NSLock): under contention from many HTTP
/// threads it measured cheaper here than Synchronization.Mutex, whose slow path on Linux is a
/// priority-inheritance futex.
public final class Locked<Value>: @unchecked Sendable {
    private var value: Value
    private let lock = NSLock()

    public init(_ value: Value) { self.value = value }

    public func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
