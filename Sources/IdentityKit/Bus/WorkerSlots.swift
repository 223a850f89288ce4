import Foundation

/// The commands a worker runs at once (`IDENTITY_WORKER_CONCURRENCY`), counted as work on this
/// process's own cores rather than as messages held: a command that waits on another host for
/// an app (its auth hook, the lookup of the URL it saves) gives its slot back while it waits
/// (`waitingOutside`), so one app's slow backend cannot keep the other apps' commands waiting.
/// The broker's prefetch is the slots plus the waits a worker allows at once
/// (`CommandConsumer`'s `outboundWaits`), and the waits themselves are bounded per app and in
/// all where they are made (`HookFairness`).
public final class WorkerSlots: Sendable {
    private let free: DispatchSemaphore
    public let count: Int

    public init(count: Int) {
        self.count = count
        free = DispatchSemaphore(value: count)
    }

    /// Runs one command's work in a slot: the slot is taken first, given back after, and known
    /// to `waitingOutside` on this thread meanwhile.
    public func run<T>(_ body: () throws -> T) rethrows -> T {
        free.wait()
        let thread = Thread.current
        thread.threadDictionary[Self.key] = self
        defer {
            thread.threadDictionary.removeObject(forKey: Self.key)
            free.signal()
        }
        return try body()
    }

    /// Runs `body`, a wait on another host, with this thread's slot given back meanwhile (and
    /// taken again before returning); on a thread that holds no slot it just runs `body`.
    public static func waitingOutside<T>(_ body: () throws -> T) rethrows -> T {
        guard let slots = Thread.current.threadDictionary[key] as? WorkerSlots else { return try body() }
        slots.free.signal()
        defer { slots.free.wait() }
        return try body()
    }

    private static let key = "identity.worker-slots"
}
