import IdentityKit
import IdentityProviderWorker

// identity-provider-worker: verifies provider id tokens until SIGTERM or SIGINT.
let configuration = ProviderWorkerConfiguration.fromEnvironment()
Log.setLevel(configuration.common.logLevel)
ProcessLifecycle.run("identity-provider-worker", fields: ["concurrency": String(configuration.concurrency)]) {
    try ProviderWorker(configuration: configuration)
}
