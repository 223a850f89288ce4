import IdentityGateway
import IdentityKit

// identity-gateway: serves HTTP until SIGTERM or SIGINT.
// The log format first: reading the configuration may log.
CommonConfiguration.applyLogSettingsFromEnvironment()
let configuration = GatewayConfiguration.fromEnvironment()
configuration.common.applyToProcess()
ProcessLifecycle.run("identity-gateway", exports: .gateway,
                     fields: ["host": configuration.httpHost, "port": configuration.httpPort,
                              "threads": configuration.httpThreads],
                     operations: configuration.common) {
    try Gateway(configuration: configuration)
}
