import IdentityGateway
import IdentityKit

// identity-gateway: serves HTTP until SIGTERM or SIGINT.
let configuration = GatewayConfiguration.fromEnvironment()
Log.setLevel(configuration.common.logLevel)
ProcessLifecycle.run("identity-gateway", fields: ["host": configuration.httpHost, "port": String(configuration.httpPort),
                                                  "threads": String(configuration.httpThreads)]) {
    try Gateway(configuration: configuration)
}
