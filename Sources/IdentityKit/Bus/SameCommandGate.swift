import Foundation

/// One copy of a command at a time in this worker. A command can arrive twice: the broker
/// hands it out again when a connection is lost before its ack, and a gateway publishes it again
/// on a new connection when the lost one never confirmed it. The flows answer a second copy from
/// what the first committed (`redelivered`, their replay); that works only once the first is
/// over, so a copy whose message id is running here waits for it (at most `maximumWait`).
final class SameCommandGate: @unchecked Sendable {  // `running` is read and written under `lock` only
    private let lock = NSCondition()
    private var running: Set<String> = []
    static let maximumWait = 30.0

    /// Runs `body` once no other copy of `messageId` runs here (no id: at once).
    func run<T>(_ messageId: String, _ body: () -> T) -> T {
        guard !messageId.isEmpty else { return body() }
        lock.lock()
        let deadline = Date().addingTimeInterval(Self.maximumWait)
        while running.contains(messageId), lock.wait(until: deadline) {}
        let entered = running.insert(messageId).inserted
        lock.unlock()
        defer {
            if entered {
                lock.lock()
                running.remove(messageId)
                lock.broadcast()
                lock.unlock()
            }
        }
        return body()
    }
}
