import Foundation
import IdentityKit

/// Deletes rate-limit states whose quota is whole again (a missing row means the same), once a
/// minute, so the table holds only the subjects seen in the last window. Several revocation
/// workers purging at once is harmless: each row is deleted once.
final class RateLimitPurge: Sendable {
    private let store: RateLimitStore
    private let timer = Locked<DispatchSourceTimer?>(nil)
    private let queue = DispatchQueue(label: "rate-limit-purge")
    private let interval: Double

    init(store: RateLimitStore, interval: Double = 60) {
        self.store = store
        self.interval = interval
    }

    func start() {
        let source = DispatchSource.makeTimerSource(queue: queue)
        source.schedule(deadline: .now() + interval, repeating: interval)
        let store = self.store
        source.setEventHandler {
            do {
                let purged = try store.purgeExpired()
                if purged > 0 { Log.info("rate-limit states purged", ["count": String(purged)]) }
            } catch {
                // The database may be restarting; the next tick tries again.
                Log.warning("rate-limit purge failed", ["error": String(describing: error)])
            }
        }
        source.resume()
        timer.withLock { $0 = source }
    }

    /// Cancels the timer and waits for a purge that is running to finish.
    func stop() {
        timer.withLock { source in
            source?.cancel()
            source = nil
        }
        // The handler runs on `queue`: an empty block behind it returns once it is done.
        queue.sync {}
    }
}
