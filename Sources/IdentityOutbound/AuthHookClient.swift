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

    public init(pool: PGPool, seal: AuthHookSecretSeal) {
        self.hooks = AuthHookStore(pool: pool)
        self.seal = seal
        self.pool = pool
        self.auditPool = pool.companion(size: 2)
    }

    /// `on`: the connection of the caller's transaction, if it holds one.
    public func hook(appId: String, kind: AuthHook.Kind, on held: PGConnection? = nil) throws -> AuthHookRecord? {
        try hooks.hook(appId: appId, kind: kind, on: held)
    }

    /// The hook's answer when it allowed (or, for a send hook, sent); throws
    /// `ServiceError.hookRefused(message:)` when it refused and `.hookFailed` when it failed
    /// closed; nil when it failed open (the caller goes on as without the hook).
    public func ask(_ hook: AuthHookRecord, appId: String, payload: [String: JSONValue], target: String?, ip: String?,
                    problem: (AuthHook.Answer) -> String? = { _ in nil }) throws -> AuthHook.Answer? {
        let started = DispatchTime.now().uptimeNanoseconds
        let failure: String
        do {
            let secret = try seal.open(hook.secretSealed, appId: appId, kind: hook.kind)
            switch AuthHookCall(policy: .current).call(url: hook.url, secret: secret, kind: hook.kind, payload: payload,
                                                       timeoutMilliseconds: hook.timeoutMilliseconds) {
            case .failed(let reason):
                failure = reason
            case .answered(let body):
                switch AuthHook.parseAnswer(body, kind: hook.kind) {
                case .failure(let bad):
                    failure = "bad answer: " + bad.reason
                case .success(.refuse(let message)):
                    audit(appId: appId, action: "auth_hook.refused", target: target, ip: ip,
                          detail: ["kind": .string(hook.kind.rawValue), "message": .string(message)])
                    throw ServiceError.hookRefused(message: message)
                case .success(let answer):
                    if let wrong = problem(answer) {
                        failure = "bad answer: " + wrong
                    } else {
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
        let proceeds = hook.failurePolicy == .failOpen
        audit(appId: appId, action: "auth_hook.failed", target: target, ip: ip,
              detail: ["kind": .string(hook.kind.rawValue), "reason": .string(failure),
                       "failure_policy": .string(hook.failurePolicy.rawValue),
                       "outcome": .string(proceeds ? "proceeded" : "refused")])
        Log.warning("auth hook failed", ["app_id": appId, "kind": hook.kind.rawValue, "reason": failure,
                                         "failure_policy": hook.failurePolicy.rawValue])
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
