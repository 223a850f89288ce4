import IdentityKit
import IdentityRevocationWorker

// identity-revocation-worker: ends sessions and relays events until SIGTERM or SIGINT.
let configuration = RevocationWorkerConfiguration.fromEnvironment()
configuration.common.applyToProcess()
ProcessLifecycle.run("identity-revocation-worker", fields: ["concurrency": String(configuration.concurrency)],
                       operations: configuration.common) {
    try RevocationWorker(configuration: configuration)
}
