import Foundation
import IdentityCredentials
import IdentityKit
import IdentityOutbound

/// The token worker's side of an app's auth hooks: `before_sign_up` before any account is
/// created, `before_token` before any access token is signed (sign-in, MFA, refresh). The
/// call waits on the app's backend for at most the hook's timeout (5 s at most); failures,
/// policies and audit rows are `AuthHookClient`'s.
struct AuthHookGate: Sendable {
    let client: AuthHookClient
    var pool: PGPool { client.pool }

    /// `before_sign_up`: the app_metadata the hook gives the new account (nil: none), or
    /// `hookRefused` / `hookFailed`. `user` is the account about to be made (no uid yet).
    /// `connection`: the transaction that makes the account.
    func beforeSignUp(appId: String, method: String, user: [String: JSONValue], ip: String?,
                      on connection: PGConnection) throws -> JSONValue? {
        let payload: [String: JSONValue] = ["app_id": .string(appId), "method": .string(method), "user": .object(user),
                                            "request": .object(["ip": ip.map(JSONValue.string) ?? .null])]
        guard let hook = try client.hook(appId: appId, kind: .beforeSignUp, on: connection),
              case .allow(let metadata, _)? = try client.ask(hook, appId: appId, payload: payload, target: nil, ip: ip,
                                                             holdsConnection: true)
        else { return nil }
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
        guard let hook = try client.hook(appId: user.appId, kind: .beforeToken) else { return own }
        let answer = try client.ask(hook, appId: user.appId, payload: payload, target: "user:" + user.uid, ip: nil) { answer in
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
}
