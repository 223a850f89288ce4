import Foundation
import IdentityKit

/// Settings of `identity-gateway`, from `IDENTITY_*` variables, validated at start-up.
/// The gateway is never given the master key: it holds public keys only.
public struct GatewayConfiguration: Sendable {
    public var common: CommonConfiguration
    public var httpHost: String
    public var httpPort: UInt16
    public var httpThreads: Int
    /// How long a request waits for a worker's reply before answering 503.
    public var requestTimeout: Double
    public var publicBaseURL: String

    public static func fromEnvironment() -> GatewayConfiguration {
        var env = EnvironmentReader()
        let cores = ProcessInfo.processInfo.activeProcessorCount
        let threads = env.int("IDENTITY_HTTP_THREADS", default: max(2, cores * 2), range: 1...256)
        let port = env.int("IDENTITY_HTTP_PORT", default: 8080, range: 1...65_535)
        let config = GatewayConfiguration(
            common: CommonConfiguration(reading: &env, defaultPoolSize: threads),
            httpHost: env.string("IDENTITY_HTTP_HOST", default: "127.0.0.1"),
            httpPort: UInt16(port),
            httpThreads: threads,
            requestTimeout: Double(env.int("IDENTITY_REQUEST_TIMEOUT_MS", default: 5000, range: 50...120_000)) / 1000,
            publicBaseURL: env.string("IDENTITY_PUBLIC_BASE_URL", default: "http://127.0.0.1:\(port)"))
        env.validateOrExit(program: "identity-gateway")
        return config
    }
}
