import Foundation
import IdentityKit
import IdentityProviderWorker

// identity-provider-worker: verifies provider id tokens until SIGTERM or SIGINT.
let configuration = ProviderWorkerConfiguration.fromEnvironment()
Log.setLevel(configuration.common.logLevel)
do {
    let worker = try ProviderWorker(configuration: configuration)
    worker.start()
    Log.info("identity-provider-worker started", ["concurrency": String(configuration.concurrency)])
    ShutdownSignal.wait()
    Log.info("identity-provider-worker stopping")
    worker.stop()
} catch {
    Log.error("identity-provider-worker failed to start", ["error": String(describing: error)])
    exit(1)
}
