import Foundation
import IdentityKit

/// `/v1/admin/webhooks…`: the app's webhook endpoints. Every operation is one command to the
/// token worker (it seals and opens nothing here: the gateway never holds a secret), which
/// answers the data the admin API shows; the URL as written is checked here first, for a 422
/// before any command.
struct AdminWebhookRoutes: AdminWebhookApiHandlers {
    let commands: CommandSender

    func adminCreateWebhook(_ context: RouteContext) throws -> RouteResult {
        let body = try GatewayV1.WebhookCreateRequest(declaredBodyOf: context)
        try Self.checkURL(body.url)
        return try send(context, "create", id: false, status: 201) { command in
            command.url = body.url
            // No filter: every event.
            command.events = body.events.isEmpty ? ["*"] : body.events
            command.eventsGiven = true
            command.description = body.description
        }
    }

    func adminListWebhooks(_ context: RouteContext) throws -> RouteResult { try send(context, "list", id: false) }
    func adminGetWebhook(_ context: RouteContext) throws -> RouteResult { try send(context, "get") }
    func adminDeleteWebhook(_ context: RouteContext) throws -> RouteResult { try send(context, "delete", status: 204) }
    func adminWebhookDeliveries(_ context: RouteContext) throws -> RouteResult { try send(context, "deliveries") }
    func adminReplayWebhookDeliveries(_ context: RouteContext) throws -> RouteResult { try send(context, "replay") }

    func adminUpdateWebhook(_ context: RouteContext) throws -> RouteResult {
        let body = try GatewayV1.WebhookUpdateRequest(declaredBodyOf: context)
        if let url = body.url { try Self.checkURL(url) }
        return try send(context, "update") { command in
            command.url = body.url
            command.events = body.events
            command.eventsGiven = body.eventsGiven
            command.description = body.description
            command.enabled = body.enabled
        }
    }

    func adminRotateWebhookSecret(_ context: RouteContext) throws -> RouteResult {
        let body = try GatewayV1.WebhookRotateSecretRequest(declaredBodyOf: context)
        return try send(context, "rotate_secret") { $0.overlapSeconds = body.overlapSeconds }
    }

    private func send(_ context: RouteContext, _ action: String, id: Bool = true, status: Int = 200,
                      _ fill: (inout AdminV1.ManageWebhooks) -> Void = { _ in }) throws -> RouteResult {
        let caller = try context.requireAdmin()
        var command = AdminV1.ManageWebhooks(appId: caller.app.id, actor: caller.actor, action: action)
        if id {
            // Ids are whk_ and a lower-case ULID; anything else names no endpoint.
            guard let webhookId = context.request.parameters["webhook_id"] else {
                throw ServiceError.notFound
            }
            command.webhookId = webhookId
        }
        fill(&command)
        return commands.send(command, expecting: AdminV1.WebhookAnswer.self, appId: caller.app.id, request: context.request) {
            if status == 204 { return .noContent }
            return HTTPResponse.data(JSONValue.parse(Data($0.dataJson.utf8)) ?? .null, status: status)
        }
    }

    /// The URL as written (scheme, a literal refused address), without a DNS lookup: the
    /// gateway's HTTP threads never wait on DNS; the token worker also checks where it resolves.
    private static func checkURL(_ url: String) throws {
        if let problem = OutboundAddressPolicy.current.problem(url: url) {
            throw ServiceError.validationFailed([.init(location: "body.url", message: problem)])
        }
    }
}

/// Field rules of the webhook bodies.
enum WebhookFields {
    /// `events`: event names, or `["*"]` (`WebhookRules.eventsProblem`).
    static func events(_ key: String, _ body: inout BodyReader) -> [String]? {
        guard let value = body.value(key) else { return nil }
        guard case .array(let items) = value else {
            body.add(.init(location: "body.\(key)", message: "must be a list of event names, or [\"*\"]"))
            return nil
        }
        var names: [String] = []
        for item in items {
            guard case .string(let name) = item else {
                body.add(.init(location: "body.\(key)", message: "must be a list of event names, or [\"*\"]"))
                return nil
            }
            if !names.contains(name) { names.append(name) }
        }
        if let problem = WebhookRules.eventsProblem(names) {
            body.add(.init(location: "body.\(key)", message: problem))
            return nil
        }
        return names
    }
}
