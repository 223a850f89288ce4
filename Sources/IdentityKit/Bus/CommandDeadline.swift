import Foundation

/// How long a command may still wait on another host (an app's auth hook) and leave its caller
/// time for the rest: a command carries its caller's deadline as its expiration (the gateway's
/// `IDENTITY_REQUEST_TIMEOUT_MS`), and a wait must end `room` before it, so that a hook that
/// answers at its timeout still makes its sign-in instead of a 503 at the gateway.
public enum CommandDeadline {
    /// Time kept for the rest of the request (the hash, the store, signing, the replies'
    /// trips): two fifths of the caller's timeout, at least 1 s (2 s of the default 5 s).
    public static func room(ofMilliseconds timeout: Int) -> Int { max(1000, timeout * 2 / 5) }

    /// Runs a command's handler with its deadline known to `bound` on this thread.
    static func run<T>(expirationMilliseconds: Int?, _ body: () -> T) -> T {
        guard let expiration = expirationMilliseconds, expiration > 0 else { return body() }
        let until = DispatchTime.now().uptimeNanoseconds
            + UInt64(max(0, expiration - room(ofMilliseconds: expiration))) * 1_000_000
        let thread = Thread.current
        thread.threadDictionary[key] = NSNumber(value: until)
        defer { thread.threadDictionary.removeObject(forKey: key) }
        return body()
    }

    /// `wanted` milliseconds, or what is left of the current command's time when less (0 when
    /// none is); `wanted` on a thread that runs no command with a deadline.
    public static func bound(_ wanted: Int) -> Int {
        guard let until = (Thread.current.threadDictionary[key] as? NSNumber)?.uint64Value else { return wanted }
        let now = DispatchTime.now().uptimeNanoseconds
        guard until > now else { return 0 }
        return min(wanted, Int((until - now) / 1_000_000))
    }

    private static let key = "identity.command-deadline"
}
