import IdentityKit
import IdentityWebhookWorker

// identity-webhook-worker: delivers the apps' events to their webhook endpoints until SIGTERM or SIGINT.
let configuration = WebhookWorkerConfiguration.fromEnvironment()
configuration.common.applyToProcess()
ProcessLifecycle.run("identity-webhook-worker", fields: ["concurrency": String(configuration.concurrency)],
                     operations: configuration.common) {
    try WebhookWorker(configuration: configuration)
}
