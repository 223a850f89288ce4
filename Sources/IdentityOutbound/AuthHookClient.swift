import Foundation
import IdentityCredentials
import IdentityKit

/// Asking an app's auth hook, for the token worker and the mailer alike: the secret opened, the
/// call made (`AuthHookCall`, under this process's outbound address rules), the answer held to
/// its schema (`AuthHook.parseAnswer`) and to the caller's own `problem`, and a failure (timeout,
/// refused address, non-2xx, a bad answer) turned into the hook's failure policy. A refusal and
/// a failure each leave an audit row, written on a connection of its own so that it stays when
/// the refused work rolls back.
public struct AuthHookClient: Sendable {
    public let hooks: AuthHookStore
    public let seal: AuthHookSecretSeal
    public let pool: PGPool
    /// Where the audit rows go: a hook is asked inside the caller's transaction, whose
    /// connection is held meanwhile, and its row must stay if that transaction rolls back.
    private let auditPool: PGPool

    /// The bounds on waiting for apps' hooks (`HookFairness`), one per process.
    public let fairness: HookFairness

    public init(pool: PGPool, seal: AuthHookSecretSeal, fairness: HookFairness) {
        self.hooks = AuthHookStore(pool: pool)
        self.seal = seal
        self.pool = pool
        self.fairness = fairness
        self.auditPool = pool.companion(size: 2)
    }

    /// `on`: the connection of the caller's transaction, if it holds one.
    public func hook(appId: String, kind: AuthHook.Kind, on held: PGConnection? = nil) throws -> AuthHookRecord? {
        try hooks.hook(appId: appId, kind: kind, on: held)
    }

    /// The hook's answer when it allowed (or, for a send hook, sent); throws
    /// `ServiceError.hookRefused(message:)` when it refused and `.hookFailed` when it failed
    /// closed; nil when it failed open (the caller goes on as without the hook).
    /// The call waits with the worker's slot given back, within `HookFairness`'s bounds: a call
    /// they do not let through fails at once (no audit row each: one when the breaker opens).
    /// `holdsConnection`: the caller waits inside a transaction (`before_sign_up`).
    public func ask(_ hook: AuthHookRecord, appId: String, payload: [String: JSONValue], target: String?, ip: String?,
                    holdsConnection: Bool = false,
                    problem: (AuthHook.Answer) -> String? = { _ in nil }) throws -> AuthHook.Answer? {
        let started = DispatchTime.now().uptimeNanoseconds
        let failure: String
        // The hook's timeout, within the caller's deadline too: a wait that would outlast it is
        // cut short, so the failure policy still answers the caller.
        let allowed = { CommandDeadline.bound(min(hook.timeoutMilliseconds, AuthHook.timeoutRange.upperBound)) }
        // Waiting for one of the app's spots holds no worker slot either, and never outlasts the
        // time the call itself could take.
        let admission = WorkerSlots.waitingOutside {
            fairness.admit(appId: appId, kind: hook.kind.rawValue, holdsConnection: holdsConnection,
                           waitMilliseconds: allowed())
        }
        switch admission {
        case .refused(let reason):
            ServiceMetrics.hookCallsSkipped.inc(hook.kind.rawValue)
            Log.debug("auth hook not called", ["app_id": appId, "kind": hook.kind.rawValue, "reason": reason])
            return try failed(hook, appId: appId, reason: reason, target: target, ip: ip, audited: false)
        case .go(let ticket):
            var answered = false
            defer {
                if fairness.finish(ticket, answered: answered) {
                    audit(appId: appId, action: "auth_hook.circuit_opened", target: target, ip: ip,
                          detail: ["kind": .string(hook.kind.rawValue), "failures": .number(Double(fairness.limits.failuresToOpen)),
                                   "seconds": .number(Double(fairness.limits.openSeconds)),
                                   "failure_policy": .string(hook.failurePolicy.rawValue)])
                    Log.warning("auth hook breaker opened", ["app_id": appId, "kind": hook.kind.rawValue])
                }
            }
            do {
                let secret = try seal.open(hook.secretSealed, appId: appId, kind: hook.kind)
                let timeout = allowed()  // what the wait for a spot left
                let outcome: AuthHookCall.Outcome = timeout < 1 ? .failed("no time left before the caller's deadline")
                    : AuthHookCall(policy: .current).call(url: hook.url, secret: secret, kind: hook.kind, payload: payload,
                                                          timeoutMilliseconds: timeout)
                switch outcome {
                case .failed(let reason):
                    failure = reason
                case .answered(let body):
                    switch AuthHook.parseAnswer(body, kind: hook.kind) {
                    case .failure(let bad):
                        failure = "bad answer: " + bad.reason
                    case .success(.refuse(let message)):
                        answered = true
                        audit(appId: appId, action: "auth_hook.refused", target: target, ip: ip,
                              detail: ["kind": .string(hook.kind.rawValue), "message": .string(message)])
                        throw ServiceError.hookRefused(message: message)
                    case .success(let answer):
                        if let wrong = problem(answer) {
                            failure = "bad answer: " + wrong
                        } else {
                            answered = true
                            Log.debug("auth hook answered", ["app_id": appId, "kind": hook.kind.rawValue,
                                                             "ms": String((DispatchTime.now().uptimeNanoseconds - started) / 1_000_000)])
                            return answer
                        }
                    }
                }
            } catch let error as ServiceError {
                throw error
            } catch {
                failure = "the hook's secret could not be opened"
            }
        }
        return try failed(hook, appId: appId, reason: failure, target: target, ip: ip, audited: true)
    }

    /// The failure policy applied: nil (go on without the hook) or `hookFailed`.
    private func failed(_ hook: AuthHookRecord, appId: String, reason: String, target: String?, ip: String?,
                        audited: Bool) throws -> AuthHook.Answer? {
        let proceeds = hook.failurePolicy == .failOpen
        if audited {
            audit(appId: appId, action: "auth_hook.failed", target: target, ip: ip,
                  detail: ["kind": .string(hook.kind.rawValue), "reason": .string(reason),
                           "failure_policy": .string(hook.failurePolicy.rawValue),
                           "outcome": .string(proceeds ? "proceeded" : "refused")])
            Log.warning("auth hook failed", ["app_id": appId, "kind": hook.kind.rawValue, "reason": reason,
                                             "failure_policy": hook.failurePolicy.rawValue])
        }
        if proceeds { return nil }
        throw ServiceError.hookFailed
    }

    private func audit(appId: String, action: String, target: String?, ip: String?, detail: [String: JSONValue]) {
        do {
            try AuditLog(pool: auditPool).append(appId: appId, AuditLog.Entry(actor: "system", action: action, target: target,
                                                                         ip: ip, detail: .object(detail)))
        } catch {
            Log.error("auth hook audit row not written", ["app_id": appId, "error": String(describing: error)])
        }
    }
}
