import Foundation

/// Hands every auth state change to every live ``IdentityClient/authStates`` stream.
final class AuthStateBroadcaster: @unchecked Sendable {
    // Guarded by `lock`: continuations are added by subscribers and removed when they stop listening.
    private let lock = NSLock()
    private var continuations: [UUID: AsyncStream<AuthState>.Continuation] = [:]

    /// A subscriber that stops reading keeps at most the newest 32 changes, not an unbounded backlog.
    func stream() -> AsyncStream<AuthState> {
        AsyncStream(bufferingPolicy: .bufferingNewest(32)) { continuation in
            let id = UUID()
            lock.lock()
            continuations[id] = continuation
            lock.unlock()
            continuation.onTermination = { [weak self] _ in
                guard let self else { return }
                self.lock.lock()
                self.continuations[id] = nil
                self.lock.unlock()
            }
        }
    }

    func send(_ state: AuthState) {
        lock.lock()
        let targets = Array(continuations.values)
        lock.unlock()
        for continuation in targets { continuation.yield(state) }
    }

    deinit {
        for continuation in continuations.values { continuation.finish() }
    }
}
