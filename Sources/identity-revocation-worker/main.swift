import Foundation
import IdentityKit
import IdentityRevocationWorker

// identity-revocation-worker: ends sessions and relays events until SIGTERM or SIGINT.
let configuration = RevocationWorkerConfiguration.fromEnvironment()
Log.setLevel(configuration.common.logLevel)
do {
    let worker = try RevocationWorker(configuration: configuration)
    worker.start()
    Log.info("identity-revocation-worker started", ["concurrency": String(configuration.concurrency)])
    ShutdownSignal.wait()
    Log.info("identity-revocation-worker stopping")
    worker.stop()
} catch {
    Log.error("identity-revocation-worker failed to start", ["error": String(describing: error)])
    exit(1)
}
