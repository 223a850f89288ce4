import IdentityKit
import IdentityTokenWorker

// identity-token-worker: consumes token commands until SIGTERM or SIGINT.
// The log format first: reading the configuration may log.
CommonConfiguration.applyLogSettingsFromEnvironment()
let configuration = TokenWorkerConfiguration.fromEnvironment()
configuration.common.applyToProcess()
ProcessLifecycle.run("identity-token-worker", exports: .tokenWorker, fields: ["concurrency": configuration.concurrency],
                     operations: configuration.common) {
    try TokenWorker(configuration: configuration)
}
