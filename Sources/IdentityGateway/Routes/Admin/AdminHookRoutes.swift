import Foundation
import IdentityKit

/// `/v1/admin/hooks`: the app's auth hooks (`AuthHook`). Saving is a command to the token
/// worker, which looks up where the URL resolves, seals the secret with the master key it alone
/// holds, and shows a new secret this once; the URL's text is checked here first.
struct AdminHookRoutes: AdminHookApiHandlers {
    let commands: CommandSender

    func adminListHooks(_ context: RouteContext) throws -> RouteResult {
        let caller = try context.requireAdmin()
        let command = AdminV1.ListAuthHooks(appId: caller.app.id, actor: caller.actor)
        return commands.send(command, expecting: AdminV1.AuthHookList.self, appId: caller.app.id, request: context.request) {
            HTTPResponse.data(.object(["hooks": .array($0.hooks.map(Self.json))]))
        }
    }

    func adminSaveHook(_ context: RouteContext) throws -> RouteResult {
        let caller = try context.requireAdmin()
        let kind = try Self.kind(context)
        let body = try GatewayV1.AuthHookRequest(declaredBodyOf: context)
        if let problem = AuthHook.urlProblem(body.url, policy: .current) {
            throw ServiceError.validationFailed([.init(location: "body.url", message: problem)])
        }
        let command = AdminV1.SaveAuthHook(appId: caller.app.id, kind: kind.rawValue, url: body.url, timeoutMs: body.timeoutMs,
                                           failurePolicy: body.failurePolicy, rotateSecret: body.rotateSecret ?? false,
                                           actor: caller.actor)
        return commands.send(command, expecting: AdminV1.AuthHookSaved.self, appId: caller.app.id, request: context.request) {
            HTTPResponse.data(Self.json($0))
        }
    }

    func adminDeleteHook(_ context: RouteContext) throws -> RouteResult {
        let caller = try context.requireAdmin()
        let command = AdminV1.DeleteAuthHook(appId: caller.app.id, kind: try Self.kind(context).rawValue, actor: caller.actor)
        let requestId = context.request.requestId
        return commands.send(command, expecting: AdminV1.AuthHookDeleted.self, appId: caller.app.id, request: context.request) {
            $0.deleted ? .noContent : .problem(.notFound, requestId: requestId)
        }
    }

    /// A kind the service does not call is no hook: 404.
    private static func kind(_ context: RouteContext) throws -> AuthHook.Kind {
        guard let kind = context.request.parameters["kind"].flatMap(AuthHook.Kind.init(rawValue:)) else {
            throw ServiceError.notFound
        }
        return kind
    }

    static func json(_ hook: AdminV1.AuthHookSaved) -> JSONValue {
        .object(["kind": .string(hook.kind), "url": .string(hook.url), "timeout_ms": JSONValue(Int(hook.timeoutMs)),
                 "failure_policy": .string(hook.failurePolicy), "updated_at": .string(hook.updatedAt),
                 "secret": hook.secret.isEmpty ? .null : .string(hook.secret)])
    }
}
