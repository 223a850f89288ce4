import Foundation
import IdentityCredentials
import IdentityKit

/// `identity.admin.v1` commands of `/v1/admin/hooks`: `AuthHookStore`, as `identityctl hooks`
/// runs it; here because a hook's secret is sealed with the master key, and because where a
/// URL resolves is looked up only where settings are written, never in the gateway.
struct AdminAuthHooks: Sendable {
    let store: AuthHookStore
    let masterKey: [UInt8]

    func handle(_ command: AdminV1.SaveAuthHook) throws -> AdminV1.AuthHookSaved {
        guard let kind = AuthHook.Kind(rawValue: command.kind) else { throw ServiceError.notFound }
        var policy: AuthHook.FailurePolicy?
        if let text = command.failurePolicy {
            guard let named = AuthHook.FailurePolicy(rawValue: text) else {
                throw ServiceError.validationFailed([.init(location: "body.failure_policy", message: "must be fail_closed or fail_open")])
            }
            policy = named
        }
        let change = AuthHookStore.Change(url: command.url, timeoutMilliseconds: command.timeoutMs.map(Int.init),
                                          failurePolicy: policy, rotateSecret: command.rotateSecret)
        let problems = AuthHookStore.problems(change, policy: .current)
        guard problems.isEmpty else {
            throw ServiceError.validationFailed(problems.map { .init(location: "body." + $0.0, message: $0.1) })
        }
        let (record, secret) = try store.save(appId: command.appId, kind: kind, change, masterKey: masterKey)
        Log.info("auth hook saved", ["app_id": command.appId, "kind": kind.rawValue, "actor": command.actor,
                                     "secret": secret == nil ? "kept" : "new"])
        return Self.message(record, secret: secret ?? "")
    }

    func handle(_ command: AdminV1.ListAuthHooks) throws -> AdminV1.AuthHookList {
        AdminV1.AuthHookList(hooks: try store.hooks(appId: command.appId).map { Self.message($0, secret: "") })
    }

    func handle(_ command: AdminV1.DeleteAuthHook) throws -> AdminV1.AuthHookDeleted {
        guard let kind = AuthHook.Kind(rawValue: command.kind) else { throw ServiceError.notFound }
        return AdminV1.AuthHookDeleted(deleted: try store.delete(appId: command.appId, kind: kind))
    }

    static func message(_ record: AuthHookRecord, secret: String) -> AdminV1.AuthHookSaved {
        AdminV1.AuthHookSaved(kind: record.kind.rawValue, url: record.url, timeoutMs: Int32(record.timeoutMilliseconds),
                              failurePolicy: record.failurePolicy.rawValue, updatedAt: record.updatedAt, secret: secret)
    }
}
