import IdentityGateway
import IdentityKit

// identity-gateway: serves HTTP until SIGTERM or SIGINT.
let configuration = GatewayConfiguration.fromEnvironment()
configuration.common.applyToProcess()
ProcessLifecycle.run("identity-gateway", fields: ["host": configuration.httpHost, "port": String(configuration.httpPort),
                                                  "threads": String(configuration.httpThreads)],
                       operations: configuration.common) {
    try Gateway(configuration: configuration)
}
