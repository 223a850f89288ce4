import IdentityKit
import IdentityProviderWorker

// identity-provider-worker: verifies provider id tokens until SIGTERM or SIGINT.
// The log format first: reading the configuration may log.
CommonConfiguration.applyLogSettingsFromEnvironment()
let configuration = ProviderWorkerConfiguration.fromEnvironment()
configuration.common.applyToProcess()
ProcessLifecycle.run("identity-provider-worker", exports: .providerWorker, fields: ["concurrency": configuration.concurrency],
                     operations: configuration.common) {
    try ProviderWorker(configuration: configuration)
}
