import Foundation
import IdentityCredentials
import IdentityKit

/// Runs the retention purge (`RetentionStore`) every `interval` seconds: spent and expired
/// nonces, codes and refresh tokens, ended sessions, unused guests, spent rate-limit states.
/// Any number of revocation workers may run it; one at a time does the work.
final class RetentionPurge: Sendable {
    private let store: RetentionStore
    private let periods: RetentionStore.Periods
    private let timer = Locked<DispatchSourceTimer?>(nil)
    private let queue = DispatchQueue(label: "retention-purge")
    private let interval: Double

    init(store: RetentionStore, periods: RetentionStore.Periods, interval: Double) {
        self.store = store
        self.periods = periods
        self.interval = interval
    }

    func start() {
        let source = DispatchSource.makeTimerSource(queue: queue)
        source.schedule(deadline: .now() + interval, repeating: interval)
        let store = self.store, periods = self.periods
        source.setEventHandler {
            do {
                guard let counts = try store.purge(periods) else { return }  // another worker purges
                let purged = counts.filter { $0.value > 0 }
                if !purged.isEmpty {
                    Log.info("retention purge", purged)
                }
            } catch {
                // The database may be restarting; the next tick tries again.
                Log.warning("retention purge failed", ["error": String(describing: error)])
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
