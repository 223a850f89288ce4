import Foundation

/// The threads a consumer runs its commands on: one per command the broker may hand it at once
/// (its prefetch), made up front. Not Dispatch's pool: on Linux that pool grows only slowly past
/// the cores when its threads block, and a command waiting on an app's hook does block one, so
/// the next command (another app's) would wait for a thread that is not there.
final class CommandThreads: Sendable {
    private let work = Locked<[@Sendable () -> Void]>([])
    private let ready = DispatchSemaphore(value: 0)

    init(name: String, count: Int) {
        for index in 0..<count {
            let thread = Thread { [self] in
                while true {
                    ready.wait()
                    let next = work.withLock { $0.isEmpty ? nil : $0.removeFirst() }
                    next?()
                }
            }
            thread.name = "\(name)-\(index)"
            thread.start()
        }
    }

    func async(_ body: @escaping @Sendable () -> Void) {
        work.withLock { $0.append(body) }
        ready.signal()
    }
}
