import Foundation
import IdentityCredentials
import IdentityKit

/// `identity.admin.v1.ManageWebhooks`: the admin API's webhook endpoints. Here because the
/// secrets are sealed with a sub-key of the master key; the rules are `WebhookRules` and
/// `WebhookEndpointStore.urlProblem`, which identityctl runs too.
struct WebhookAdministration: Sendable {
    let store: WebhookEndpointStore

    func handle(_ command: AdminV1.ManageWebhooks) throws -> AdminV1.WebhookAnswer {
        let data: JSONValue
        switch command.action {
        case "create":
            try check(url: command.url, events: command.events, description: command.description)
            data = try store.create(appId: command.appId, url: command.url ?? "", events: command.events,
                                    description: command.description)
        case "list":
            data = .array(try store.list(appId: command.appId))
        case "get":
            data = try found(store.get(appId: command.appId, id: command.webhookId))
        case "update":
            try check(url: command.url, events: command.eventsGiven ? command.events : nil, description: command.description)
            let change = WebhookEndpointStore.Change(url: command.url, events: command.eventsGiven ? command.events : nil,
                                                     description: command.description, enabled: command.enabled)
            data = try found(store.update(appId: command.appId, id: command.webhookId, change))
        case "delete":
            guard try store.delete(appId: command.appId, id: command.webhookId) else { throw ServiceError.notFound }
            data = .null
        case "rotate_secret":
            if let problem = DeclaredBounds.problem(Int(command.overlapSeconds),
                                                    in: GatewayV1.WebhookRotateSecretRequest.overlapSecondsRange) {
                throw ServiceError.validationFailed([.init(location: "body.overlap_seconds", message: problem)])
            }
            data = try found(store.rotateSecret(appId: command.appId, id: command.webhookId,
                                                overlapSeconds: Int(command.overlapSeconds)))
        case "deliveries":
            data = .array(try found(store.deliveries(appId: command.appId, id: command.webhookId)))
        case "replay":
            data = .object(["replayed": JSONValue(try found(store.replay(appId: command.appId, id: command.webhookId)))])
        default:
            throw ServiceError.validationFailed([.init(location: "body", message: "unknown webhook action")])
        }
        return AdminV1.WebhookAnswer(dataJson: data.serialized)
    }

    private func found<T>(_ value: T?) throws -> T {
        guard let value else { throw ServiceError.notFound }
        return value
    }

    private func check(url: String?, events: [String]?, description: String?) throws {
        var problems: [ServiceError.FieldProblem] = []
        if let url, let problem = WebhookEndpointStore.urlProblem(url, policy: OutboundAddressPolicy.current) {
            problems.append(.init(location: "body.url", message: problem))
        }
        if let events, let problem = WebhookRules.eventsProblem(events) {
            problems.append(.init(location: "body.events", message: problem))
        }
        if let description, let problem = WebhookRules.descriptionProblem(description) {
            problems.append(.init(location: "body.description", message: problem))
        }
        if !problems.isEmpty { throw ServiceError.validationFailed(problems) }
    }
}
