import IdentityKit
import IdentityProviderWorker

// identity-provider-worker: verifies provider id tokens until SIGTERM or SIGINT.
let configuration = ProviderWorkerConfiguration.fromEnvironment()
configuration.common.applyToProcess()
ProcessLifecycle.run("identity-provider-worker", fields: ["concurrency": String(configuration.concurrency)],
                       operations: configuration.common) {
    try ProviderWorker(configuration: configuration)
}
