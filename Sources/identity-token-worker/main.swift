import Foundation
import IdentityKit
import IdentityTokenWorker

// identity-token-worker: consumes token commands until SIGTERM or SIGINT.
let configuration = TokenWorkerConfiguration.fromEnvironment()
Log.setLevel(configuration.common.logLevel)
do {
    let worker = try TokenWorker(configuration: configuration)
    worker.start()
    Log.info("identity-token-worker started", ["concurrency": String(configuration.concurrency)])
    ShutdownSignal.wait()
    Log.info("identity-token-worker stopping")
    worker.stop()
} catch {
    Log.error("identity-token-worker failed to start", ["error": String(describing: error)])
    exit(1)
}
