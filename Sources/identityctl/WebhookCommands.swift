import Foundation
import IdentityCredentials
import IdentityKit

/// `identityctl webhooks list|create|delete|rotate-secret APP_ID …`: the admin API's webhook
/// endpoints, with its rules (`WebhookRules`, `WebhookEndpointStore.urlProblem`) and store, printing
/// what the admin API answers (its `data`).
func webhookCommand(_ arguments: [String], env: inout EnvironmentReader, common: CommonConfiguration) -> Never {
    let action = arguments.dropFirst().first ?? ""
    let rest = Array(arguments.dropFirst(2))
    guard let appId = rest.first, !appId.hasPrefix("--") else { fail("webhooks \(action) needs APP_ID\n\(usage)") }
    let masterKey = env.key32("IDENTITY_MASTER_KEY", required: true)
    env.validateOrExit(program: "identityctl")
    let store = WebhookEndpointStore(pool: PGPool(url: common.databaseURL, size: 1), masterKey: masterKey ?? [])
    func endpointId() -> String {
        guard rest.count >= 2, !rest[1].hasPrefix("--") else { fail("webhooks \(action) needs APP_ID WEBHOOK_ID") }
        return rest[1]
    }
    do {
        let answer: JSONValue
        switch action {
        case "list":
            answer = .array(try store.list(appId: appId))
        case "create":
            guard let url = option("--url", in: rest) else { fail("webhooks create needs --url URL") }
            let events = (option("--events", in: rest) ?? "*").split(separator: ",").map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            let description = option("--description", in: rest)
            if let problem = WebhookEndpointStore.urlProblem(url, policy: OutboundAddressPolicy.current) {
                fail("--url \(problem)")
            }
            if let problem = WebhookRules.eventsProblem(events) { fail("--events \(problem) (comma-separated)") }
            if let description, let problem = WebhookRules.descriptionProblem(description) { fail("--description \(problem)") }
            answer = try store.create(appId: appId, url: url, events: events, description: description)
        case "delete":
            let id = endpointId()
            guard try store.delete(appId: appId, id: id) else { fail("no webhook \(id) in app \(appId)") }
            answer = .object(["deleted": .string(id)])
        case "rotate-secret":
            let id = endpointId()
            let overlapRange = GatewayV1.WebhookRotateSecretRequest.overlapSecondsRange
            guard let overlap = Int(option("--overlap", in: rest) ?? String(GatewayV1.WebhookRotateSecretRequest.overlapSecondsDefault)),
                  overlapRange.contains(overlap) else {
                fail("--overlap must be \(overlapRange.lowerBound) to \(overlapRange.upperBound) seconds (7 days)")
            }
            guard let rotated = try store.rotateSecret(appId: appId, id: id, overlapSeconds: overlap) else {
                fail("no webhook \(id) in app \(appId)")
            }
            answer = rotated
        default:
            fail("unknown command webhooks \(action)\n\(usage)")
        }
        print(answer.serialized)
        exit(0)
    } catch let error as ServiceError where error == .notFound {
        fail("no app \(appId)")
    } catch {
        fail("webhooks \(action) failed: \(error)")
    }
}
