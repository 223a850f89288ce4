import XCTest
@testable import IdentityGateway
@testable import IdentityKit

/// The gateway's route table, built without connecting to anything (the route-table tests' one fixture).
func servedRoutesForTests() throws -> [Route] {
    let pool = PGPool(url: "postgresql://nobody@127.0.0.1:1/none", size: 1)
    let bus = try BusClient(url: "amqp://guest:guest@127.0.0.1:1/%2F", heartbeatSeconds: 30)
    let store = AppStore(pool: pool)
    return Gateway.routes(pool: pool, bus: bus, apps: AppResolver(store: store, profiles: ClientProfileStore(pool: pool)),
                          appStore: store, commands: CommandSender(bus: bus, timeout: 1),
                          verifier: TokenVerifier(store: store), users: UserProfileStore(pool: pool),
                          sessions: SessionStore(pool: pool), secretKeys: SecretKeyStep(store: SecretKeyStore(pool: pool)))
}
