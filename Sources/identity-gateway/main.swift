import Foundation
import IdentityGateway
import IdentityKit

// identity-gateway: serves HTTP until SIGTERM or SIGINT.
let configuration = GatewayConfiguration.fromEnvironment()
Log.setLevel(configuration.common.logLevel)
do {
    let gateway = try Gateway(configuration: configuration)
    try gateway.start()
    Log.info("identity-gateway listening", ["host": configuration.httpHost, "port": String(configuration.httpPort),
                                            "threads": String(configuration.httpThreads)])
    ShutdownSignal.wait()
    Log.info("identity-gateway stopping")
    gateway.stop()
} catch {
    Log.error("identity-gateway failed to start", ["error": String(describing: error)])
    exit(1)
}
