import Foundation

/// SIGTERM and SIGINT, caught from the moment this is made: the first one ends `wait()`, so an
/// executable can stop its services in reverse order and exit cleanly; a later one calls
/// `onRepeat` (an operator who signals again does not want to wait for the drain). Made before
/// anything starts, so a signal during start-up is not the default action (an instant death
/// mid-start) but a stop once started.
public final class ShutdownSignal: Sendable {
    private let semaphore = DispatchSemaphore(value: 0)
    private let received = Locked(0)
    /// Kept for the life of the process: a signal while stopping must reach `onRepeat`.
    private let sources = Locked<[DispatchSourceSignal]>([])

    public init(onRepeat: @escaping @Sendable (Int32) -> Void) {
        signal(SIGTERM, SIG_IGN)
        signal(SIGINT, SIG_IGN)
        signal(SIGPIPE, SIG_IGN)
        // Blocked in this thread and so in every thread made after it (made first thing, before
        // any other): the signals then wait, pending, for the dispatch sources' signalfd. A
        // thread that had them unblocked could take one first and it would be lost: seen as a
        // worker that ignored a SIGTERM sent right after a SIGCONT. (Blocked, they are never
        // discarded as ignored.)
        var mask = sigset_t()
        sigemptyset(&mask)
        sigaddset(&mask, SIGTERM)
        sigaddset(&mask, SIGINT)
        pthread_sigmask(SIG_BLOCK, &mask, nil)
        let queue = DispatchQueue(label: "signals")
        let made = [SIGTERM, SIGINT].map { number -> DispatchSourceSignal in
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { [semaphore, received] in
                let count = received.withLock { count -> Int in
                    count += 1
                    return count
                }
                if count == 1 { semaphore.signal() } else { onRepeat(number) }
            }
            source.resume()
            return source
        }
        sources.withLock { $0 = made }
    }

    /// Blocks until the first SIGTERM or SIGINT (returns at once if it came already).
    public func wait() {
        semaphore.wait()
    }
}
