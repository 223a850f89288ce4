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
    /// On SIGTERM, how long the gateway waits for the requests it has to be answered before it
    /// answers those still waiting for a worker 503 (`IDENTITY_SHUTDOWN_GRACE_MS`; by default
    /// the request timeout plus 2 s, so a request normally gets its own answer or timeout).
    public var shutdownGrace: Double
    public var publicBaseURL: String
    /// Proxies whose `X-Forwarded-For` is believed (`IDENTITY_TRUSTED_PROXIES`); none by default.
    var trustedProxies: TrustedProxies
    /// Connection limits and header/body deadlines (`IDENTITY_HTTP_MAX_CONNECTIONS…`).
    var connectionLimits: ConnectionLimits

    public static func fromEnvironment() -> GatewayConfiguration {
        var env = EnvironmentReader()
        let cores = ProcessInfo.processInfo.activeProcessorCount
        let threads = env.int("IDENTITY_HTTP_THREADS", default: max(2, cores * 2), range: 1...256)
        let port = env.int("IDENTITY_HTTP_PORT", default: 8080, range: 1...65_535)
        let requestTimeoutMilliseconds = env.int("IDENTITY_REQUEST_TIMEOUT_MS", default: 5000, range: 50...120_000)
        let config = GatewayConfiguration(
            common: CommonConfiguration(reading: &env, defaultPoolSize: threads),
            httpHost: env.string("IDENTITY_HTTP_HOST", default: "127.0.0.1"),
            httpPort: UInt16(port),
            httpThreads: threads,
            requestTimeout: Double(requestTimeoutMilliseconds) / 1000,
            shutdownGrace: Double(env.int("IDENTITY_SHUTDOWN_GRACE_MS", default: requestTimeoutMilliseconds + 2000,
                                          range: 0...600_000)) / 1000,
            publicBaseURL: env.string("IDENTITY_PUBLIC_BASE_URL", default: "http://127.0.0.1:\(port)"),
            trustedProxies: trustedProxies(reading: &env),
            connectionLimits: ConnectionLimits(
                maxConnections: env.int("IDENTITY_HTTP_MAX_CONNECTIONS", default: 4096, range: 16...1_000_000),
                maxConnectionsPerIP: env.int("IDENTITY_HTTP_MAX_CONNECTIONS_PER_IP", default: 64, range: 1...1_000_000),
                headerTimeoutSeconds: env.int("IDENTITY_HTTP_HEADER_TIMEOUT_SECONDS", default: 10, range: 1...3600),
                bodyTimeoutSeconds: env.int("IDENTITY_HTTP_BODY_TIMEOUT_SECONDS", default: 30, range: 1...3600)))
        env.validateOrExit(program: "identity-gateway")
        return config
    }

    /// `IDENTITY_TRUSTED_PROXIES`: comma-separated CIDR ranges, each bad entry named.
    private static func trustedProxies(reading env: inout EnvironmentReader) -> TrustedProxies {
        guard let list = env.raw("IDENTITY_TRUSTED_PROXIES") else { return .none }
        do {
            return try TrustedProxies(parsing: list)
        } catch {
            for entry in error.entries {
                env.fail("IDENTITY_TRUSTED_PROXIES: \"\(entry)\" is not a CIDR range "
                    + "(IPv4 or IPv6 network with its prefix length and no host bits, like 10.0.0.0/8, "
                    + "192.168.1.7/32 or fd00::/8)")
            }
            return .none
        }
    }
}
