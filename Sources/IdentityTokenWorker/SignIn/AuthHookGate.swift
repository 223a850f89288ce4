import Foundation
import IdentityCredentials
import IdentityKit
import IdentityOutbound

/// The token worker's side of an app's auth hooks: `before_sign_up` before any account is
/// created, `before_token` before any access token is signed (sign-in, MFA, refresh). The
/// call waits on the app's backend for at most the hook's timeout (5 s at most); a failure
/// (timeout, refused address, non-2xx, an answer not its schema) follows the hook's failure
/// policy, and both a refusal and a failure leave an audit row, written on a connection of
/// its own so that it stays when the refused work rolls back.
struct AuthHookGate: Sendable {
    let hooks: AuthHookStore
    let seal: AuthHookSecretSeal
    let pool: PGPool

    /// Held to this process's outbound address rules as they are now (set from the environment).
    private var call: AuthHookCall { AuthHookCall(policy: .current) }

    /// `before_sign_up`: the app_metadata the hook gives the new account (nil: none), or
    /// `hookRefused` / `hookFailed`. `user` is the account about to be made (no uid yet).
    func beforeSignUp(appId: String, method: String, user: [String: JSONValue], ip: String?) throws -> JSONValue? {
        let payload: [String: JSONValue] = ["app_id": .string(appId), "method": .string(method), "user": .object(user),
                                            "request": .object(["ip": ip.map(JSONValue.string) ?? .null])]
        guard case .allow(let metadata, _)? = try ask(appId: appId, kind: .beforeSignUp, payload: payload,
                                                      target: nil, ip: ip) else { return nil }
        return metadata
    }

    /// `before_token`: the token's custom claims, the user's own with the hook's added (held
    /// to the custom claims' rules together), or `hookRefused` / `hookFailed`. `trigger`:
    /// sign_in or refresh.
    func beforeToken(user: UserRecord, sessionId: String, amr: [String], aal: Int, trigger: String) throws
        -> [String: JSONValue] {
        let own = CustomClaims.parse(user.customClaimsJSON)
        let payload: [String: JSONValue] = [
            "app_id": .string(user.appId), "trigger": .string(trigger),
            "user": Self.describe(user),
            "session": .object(["id": .string(sessionId), "amr": JSONValue(amr), "aal": JSONValue(aal)]),
        ]
        guard let hook = try hooks.hook(appId: user.appId, kind: .beforeToken) else { return own }
        let answer = try ask(hook, appId: user.appId, payload: payload, target: "user:" + user.uid, ip: nil) { answer in
            guard case .allow(_, let claims) = answer, AuthHook.mergedClaims(own, claims) == nil else { return nil }
            return "claims with the user's own break the custom claims' rules (1 KiB, reserved names)"
        }
        guard case .allow(_, let claims)? = answer else { return own }
        return AuthHook.mergedClaims(own, claims) ?? own
    }

    static func describe(_ user: UserRecord) -> JSONValue {
        .object(["uid": .string(user.uid), "email": user.email.map(JSONValue.string) ?? .null,
                 "email_verified": .bool(user.emailVerified), "phone": user.phone.map(JSONValue.string) ?? .null,
                 "username": user.username.map(JSONValue.string) ?? .null, "is_guest": .bool(user.isGuest),
                 "roles": JSONValue(user.roles), "identity_providers": JSONValue(user.identityProviders),
                 "custom_claims": .object(CustomClaims.parse(user.customClaimsJSON)),
                 "app_metadata": .object(CustomClaims.parse(user.appMetadataJSON))])
    }

    private func ask(appId: String, kind: AuthHook.Kind, payload: [String: JSONValue], target: String?,
                     ip: String?) throws -> AuthHook.Answer? {
        guard let hook = try hooks.hook(appId: appId, kind: kind) else { return nil }
        return try ask(hook, appId: appId, payload: payload, target: target, ip: ip)
    }

    /// The hook's answer when it allowed; throws its refusal; nil when it failed open.
    /// `problem` says what is wrong with an answer of the right schema in its context.
    private func ask(_ hook: AuthHookRecord, appId: String, payload: [String: JSONValue], target: String?,
                     ip: String?, problem: (AuthHook.Answer) -> String? = { _ in nil }) throws -> AuthHook.Answer? {
        let started = DispatchTime.now().uptimeNanoseconds
        let failure: String
        do {
            let secret = try seal.open(hook.secretSealed, appId: appId, kind: hook.kind)
            switch call.call(url: hook.url, secret: secret, kind: hook.kind, payload: payload,
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
                case .success(let answer) where problem(answer) != nil:
                    failure = "bad answer: " + (problem(answer) ?? "")
                case .success(let answer):
                    Log.debug("auth hook answered", ["app_id": appId, "kind": hook.kind.rawValue,
                                                     "ms": String((DispatchTime.now().uptimeNanoseconds - started) / 1_000_000)])
                    return answer
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
            try AuditLog(pool: pool).append(appId: appId, AuditLog.Entry(actor: "system", action: action, target: target,
                                                                         ip: ip, detail: .object(detail)))
        } catch {
            Log.error("auth hook audit row not written", ["app_id": appId, "error": String(describing: error)])
        }
    }
}
