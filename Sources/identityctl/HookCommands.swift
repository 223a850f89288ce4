import Foundation
import IdentityCredentials
import IdentityKit

/// `identityctl hooks set|list|delete`: an app's auth hooks, with the admin API's rules
/// (`AuthHookStore.problems`: https, public addresses after DNS, 100 to 5000 ms).
enum HookCommands {
    static func kind(_ text: String) -> AuthHook.Kind {
        guard let kind = AuthHook.Kind(rawValue: text) else {
            fail("KIND must be \(AuthHook.Kind.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return kind
    }

    static func set(appId: String, kind: AuthHook.Kind, arguments rest: [String], masterKey: [UInt8], pool: PGPool) throws
        -> [String: Any] {
        guard let url = option("--url", in: rest) else { fail("hooks set needs --url URL") }
        var change = AuthHookStore.Change(url: url, rotateSecret: rest.contains("--rotate-secret"))
        if let text = option("--timeout-ms", in: rest) {
            guard let timeout = Int(text) else { fail("--timeout-ms must be 100 to 5000") }
            change.timeoutMilliseconds = timeout
        }
        if let text = option("--failure-policy", in: rest) {
            guard let policy = AuthHook.FailurePolicy(rawValue: text) else { fail("--failure-policy must be fail_closed or fail_open") }
            change.failurePolicy = policy
        }
        let problems = AuthHookStore.problems(change, policy: .current)
        if let first = problems.first { fail("--\(first.0.replacingOccurrences(of: "_", with: "-")) \(first.1)") }
        guard try AppStore(pool: pool).find(id: appId) != nil else { fail("no app \(appId)") }
        let (record, secret) = try AuthHookStore(pool: pool).save(appId: appId, kind: kind, change, masterKey: masterKey)
        return describe(record, secret: secret)
    }

    static func list(appId: String, pool: PGPool) throws -> [String: Any] {
        ["hooks": try AuthHookStore(pool: pool).hooks(appId: appId).map { describe($0, secret: nil) }]
    }

    /// The admin API's shape of a hook (`GET /v1/admin/hooks`, `PUT /v1/admin/hooks/{kind}`).
    static func describe(_ record: AuthHookRecord, secret: String?) -> [String: Any] {
        ["kind": record.kind.rawValue, "url": record.url, "timeout_ms": record.timeoutMilliseconds,
         "failure_policy": record.failurePolicy.rawValue, "updated_at": record.updatedAt, "secret": secret ?? NSNull()]
    }
}
