import IdentityKit
import IdentityWebhookWorker

// identity-webhook-worker: delivers the apps' events to their webhook endpoints until SIGTERM or SIGINT.
// The log format first: reading the configuration may log.
CommonConfiguration.applyLogSettingsFromEnvironment()
let configuration = WebhookWorkerConfiguration.fromEnvironment()
configuration.common.applyToProcess()
ProcessLifecycle.run("identity-webhook-worker", exports: .webhookWorker, fields: ["concurrency": configuration.concurrency],
                     operations: configuration.common) {
    try WebhookWorker(configuration: configuration)
}
