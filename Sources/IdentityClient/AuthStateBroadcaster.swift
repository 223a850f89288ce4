import Foundation

/// Hands every auth state change to every live ``IdentityClient/authStates`` stream, each of
/// which first gets the present state (signed in as whom, or signed out).
final class AuthStateBroadcaster: @unchecked Sendable {
    // Guarded by `lock`: continuations are added by subscribers and removed when they stop
    // listening. Yielding under the lock keeps every stream's order the order of the changes.
    private let lock = NSLock()
    private var continuations: [UUID: AsyncStream<AuthState>.Continuation] = [:]
    /// `.signedIn(user)` or `.signedOut`; nil until the first change, or until the client
    /// looked at its storage (``SessionKeeper/establishState()``).
    private var state: AuthState?

    var current: AuthState? {
        lock.lock(); defer { lock.unlock() }
        return state
    }

    /// A subscriber that stops reading keeps at most the newest 32 changes, not an unbounded
    /// backlog. `establish` runs when the present state is not known yet; it ends with a call
    /// of ``establish(_:)`` (or a change), which the stream receives first.
    func stream(establish: @escaping @Sendable () async -> Void) -> AsyncStream<AuthState> {
        AsyncStream(bufferingPolicy: .bufferingNewest(32)) { continuation in
            let id = UUID()
            lock.lock()
            continuations[id] = continuation
            let known = state
            if let known { continuation.yield(known) }
            lock.unlock()
            continuation.onTermination = { [weak self] _ in
                guard let self else { return }
                self.lock.lock()
                self.continuations[id] = nil
                self.lock.unlock()
            }
            if known == nil { Task { await establish() } }
        }
    }

    /// A change, to every stream. `.refreshed` says nothing to a stream that does not know
    /// yet whether anyone is signed in, so it waits for the state to be known.
    func send(_ change: AuthState) {
        lock.lock(); defer { lock.unlock() }
        if change == .refreshed {
            guard state != nil else { return }
        } else {
            state = change
        }
        for continuation in continuations.values { continuation.yield(change) }
    }

    /// The present state found without a change (the storage read at launch): sent only when
    /// no change decided it meanwhile.
    func establish(_ found: AuthState) {
        lock.lock(); defer { lock.unlock() }
        guard state == nil else { return }
        state = found
        for continuation in continuations.values { continuation.yield(found) }
    }

    /// The signed-in user's newer profile, for the state later subscribers first receive
    /// (not a change: nobody signed in or out).
    func update(user: User) {
        lock.lock(); defer { lock.unlock() }
        if case .signedIn(let known)? = state, known.uid == user.uid { state = .signedIn(user) }
    }

    deinit {
        for continuation in continuations.values { continuation.finish() }
    }
}
