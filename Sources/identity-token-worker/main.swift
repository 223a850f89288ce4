import IdentityKit
import IdentityTokenWorker

// identity-token-worker: consumes token commands until SIGTERM or SIGINT.
let configuration = TokenWorkerConfiguration.fromEnvironment()
Log.setLevel(configuration.common.logLevel)
ProcessLifecycle.run("identity-token-worker", fields: ["concurrency": String(configuration.concurrency)]) {
    try TokenWorker(configuration: configuration)
}
