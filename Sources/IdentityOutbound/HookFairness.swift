import Foundation
import IdentityKit

/// What one app's auth hooks may take of a worker: a call waits on the app's backend with its
/// worker slot given back (`WorkerSlots.waitingOutside`), and the waits are bounded so that no
/// app can hold what the others need:
/// - at most `perApp` calls to one app's hooks at once; a call beyond waits for one of them to
///   end (as long as the call could still be made in its caller's time), but no more than
///   `perApp` wait so, and calls and waits together are at most `total` (the commands a worker
///   holds beyond its slots), so that one app never holds what the others' commands need;
/// - at most `holdingConnection` calls at once that wait inside a transaction (`before_sign_up`,
///   which must refuse the account it would make), each holding a database connection: the
///   token worker's pool has that many connections beyond its slots;
/// - a breaker per app and hook: after `failuresToOpen` failures in a row (timeouts, errors,
///   bad answers), the hook is not called for `openSeconds`; then one call probes it, and its
///   success closes the breaker.
/// A call that is not let through fails at once, and the hook's failure policy decides what
/// follows, as for any failure: with a slow or dead hook, an app's sign-ins go on (fail open)
/// or are refused (fail closed) at the speed of a sign-in without it.
public final class HookFairness: @unchecked Sendable {  // `state` is read and written under `lock` only
    public struct Limits: Sendable {
        public var perApp: Int
        public var total: Int
        public var holdingConnection: Int
        public var failuresToOpen: Int
        public var openSeconds: Int

        public init(perApp: Int = 16, total: Int = 64, holdingConnection: Int = 4, failuresToOpen: Int = 5,
                    openSeconds: Int = 30) {
            self.perApp = perApp
            self.total = total
            self.holdingConnection = holdingConnection
            self.failuresToOpen = failuresToOpen
            self.openSeconds = openSeconds
        }

        /// `IDENTITY_HOOK_*` (docs/configuration.md).
        public static func fromEnvironment(_ env: inout EnvironmentReader) -> Limits {
            Limits(perApp: env.int("IDENTITY_HOOK_APP_CONCURRENCY", default: 16, range: 1...256),
                   total: env.int("IDENTITY_HOOK_CONCURRENCY", default: 64, range: 1...1024),
                   holdingConnection: 4,
                   failuresToOpen: env.int("IDENTITY_HOOK_BREAKER_FAILURES", default: 5, range: 1...1000),
                   openSeconds: env.int("IDENTITY_HOOK_BREAKER_SECONDS", default: 30, range: 1...3600))
        }
    }

    /// A call let through: hand it back to `finish`.
    public struct Ticket: Sendable {
        let key: String
        let appId: String
        let holdsConnection: Bool
        let probe: Bool
    }

    public enum Admission: Sendable {
        case go(Ticket)
        /// Not called; why (for the log and the failure's audit detail).
        case refused(String)
    }

    private struct Breaker {
        var failures = 0
        var openUntil: UInt64?
        var probing = false
    }

    private struct State {
        var inFlight: [String: Int] = [:]
        /// Calls waiting for one of their app's spots.
        var queued: [String: Int] = [:]
        /// Calls made and waiting, in all.
        var total = 0
        var holdingConnection = 0
        var breakers: [String: Breaker] = [:]
    }

    public let limits: Limits
    private let lock = NSCondition()
    private var state = State()
    private let now: @Sendable () -> UInt64

    /// `now`: monotonic nanoseconds (tests pass their own clock).
    public init(limits: Limits, now: @escaping @Sendable () -> UInt64 = { DispatchTime.now().uptimeNanoseconds }) {
        self.limits = limits
        self.now = now
    }

    /// `waitMilliseconds`: how long the call may wait for one of its app's spots (0: none).
    public func admit(appId: String, kind: String, holdsConnection: Bool, waitMilliseconds: Int = 0) -> Admission {
        let key = appId + "\u{0}" + kind
        let limits = self.limits
        lock.lock()
        defer { lock.unlock() }
        var probe = false
        var breaker = state.breakers[key] ?? Breaker()
        if let until = breaker.openUntil {
            if now() < until || breaker.probing {
                return .refused("not called: the hook failed \(limits.failuresToOpen) times in a row, "
                    + "and is asked again after \(limits.openSeconds) s")
            }
            probe = true
        }
        if holdsConnection && state.holdingConnection >= limits.holdingConnection {
            return .refused("not called: the worker is waiting on as many hooks as it allows")
        }
        if state.inFlight[appId, default: 0] >= limits.perApp {
            guard waitMilliseconds > 0, state.queued[appId, default: 0] < limits.perApp, state.total < limits.total else {
                return .refused("not called: \(limits.perApp) calls to this app's hooks are waiting already")
            }
            state.queued[appId, default: 0] += 1
            state.total += 1
            let deadline = Date().addingTimeInterval(Double(waitMilliseconds) / 1000)
            while state.inFlight[appId, default: 0] >= limits.perApp, lock.wait(until: deadline) {}
            state.queued[appId, default: 0] -= 1
            if state.queued[appId] == 0 { state.queued[appId] = nil }
            state.total -= 1
            guard state.inFlight[appId, default: 0] < limits.perApp else {
                return .refused("not called: \(limits.perApp) calls to this app's hooks were waiting the whole time")
            }
            breaker = state.breakers[key] ?? Breaker()
            if probe && breaker.probing { return .refused("not called: another call is probing the hook") }
        } else if state.total >= limits.total {
            return .refused("not called: the worker is waiting on as many hooks as it allows")
        }
        if probe {
            breaker.probing = true
            state.breakers[key] = breaker
        }
        state.inFlight[appId, default: 0] += 1
        state.total += 1
        if holdsConnection { state.holdingConnection += 1 }
        return .go(Ticket(key: key, appId: appId, holdsConnection: holdsConnection, probe: probe))
    }

    /// The call is over; `answered`: the hook gave a usable answer (allow or refuse). Returns
    /// true when this failure opened the breaker (the caller records it once).
    @discardableResult
    public func finish(_ ticket: Ticket, answered: Bool) -> Bool {
        let time = now()
        lock.lock()
        defer {
            lock.broadcast()  // a spot of the app is free: a call waiting for one takes it
            lock.unlock()
        }
        state.inFlight[ticket.appId, default: 1] -= 1
        if state.inFlight[ticket.appId] == 0 { state.inFlight[ticket.appId] = nil }
        state.total -= 1
        if ticket.holdsConnection { state.holdingConnection -= 1 }
        var breaker = state.breakers[ticket.key] ?? Breaker()
        if ticket.probe { breaker.probing = false }
        if answered {
            state.breakers[ticket.key] = nil
            return false
        }
        breaker.failures += 1
        let opens = ticket.probe || breaker.failures == limits.failuresToOpen
        if breaker.failures >= limits.failuresToOpen || ticket.probe {
            breaker.openUntil = time + UInt64(limits.openSeconds) * 1_000_000_000
        }
        state.breakers[ticket.key] = breaker
        return opens
    }
}
