import IdentityKit
import IdentityRevocationWorker

// identity-revocation-worker: ends sessions and relays events until SIGTERM or SIGINT.
// The log format first: reading the configuration may log.
CommonConfiguration.applyLogSettingsFromEnvironment()
let configuration = RevocationWorkerConfiguration.fromEnvironment()
configuration.common.applyToProcess()
ProcessLifecycle.run("identity-revocation-worker", exports: .revocationWorker, fields: ["concurrency": configuration.concurrency],
                     operations: configuration.common) {
    try RevocationWorker(configuration: configuration)
}
