import Foundation

/// Blocks the main thread until SIGTERM or SIGINT, so an executable can stop its services in
/// reverse order and exit cleanly.
public enum ShutdownSignal {
    public static func wait() {
        signal(SIGTERM, SIG_IGN)
        signal(SIGINT, SIG_IGN)
        signal(SIGPIPE, SIG_IGN)
        let semaphore = DispatchSemaphore(value: 0)
        let queue = DispatchQueue(label: "signals")
        let sources = [SIGTERM, SIGINT].map { number -> DispatchSourceSignal in
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { semaphore.signal() }
            source.resume()
            return source
        }
        semaphore.wait()
        sources.forEach { $0.cancel() }
    }
}
