import IdentityKit
import IdentityTokenWorker

// identity-token-worker: consumes token commands until SIGTERM or SIGINT.
let configuration = TokenWorkerConfiguration.fromEnvironment()
configuration.common.applyToProcess()
ProcessLifecycle.run("identity-token-worker", fields: ["concurrency": String(configuration.concurrency)],
                       operations: configuration.common) {
    try TokenWorker(configuration: configuration)
}
