import IdentityKit
import IdentityRevocationWorker

// identity-revocation-worker: ends sessions and relays events until SIGTERM or SIGINT.
let configuration = RevocationWorkerConfiguration.fromEnvironment()
Log.setLevel(configuration.common.logLevel)
ProcessLifecycle.run("identity-revocation-worker", fields: ["concurrency": String(configuration.concurrency)]) {
    try RevocationWorker(configuration: configuration)
}
