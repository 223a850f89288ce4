import Foundation
import IdentityKit

/// Settings of `identity-provider-worker`. Every provider URL is configurable so tests and
/// air-gapped installs can point elsewhere; the defaults are the real ones.
public struct ProviderWorkerConfiguration: Sendable {
    public var common: CommonConfiguration
    /// Unseals Apple `.p8` keys and authorization codes, seals Apple refresh tokens.
    public var masterKey: [UInt8]
    public var concurrency: Int
    public var appleJWKSURL: String
    public var appleTokenURL: String
    public var appleRevokeURL: String
    public var googleJWKSURL: String
    public var firebaseJWKSURL: String
    /// An unknown `kid` refetches a JWKS at most once per this many seconds.
    public var jwksRefetchInterval: Double
    /// Cached provider keys stop being trusted this long after the last successful fetch.
    public var jwksMaximumStaleness: Double
    public var nonceLifetimeSeconds: Int
    public var outboundTimeoutMilliseconds: Int

    public static func fromEnvironment() -> ProviderWorkerConfiguration {
        var env = EnvironmentReader()
        let cores = ProcessInfo.processInfo.activeProcessorCount
        let concurrency = env.int("IDENTITY_WORKER_CONCURRENCY", default: max(2, cores * 2), range: 1...256)
        let config = ProviderWorkerConfiguration(
            common: CommonConfiguration(reading: &env, defaultPoolSize: concurrency),
            masterKey: env.key32("IDENTITY_MASTER_KEY", required: true) ?? [],
            concurrency: concurrency,
            appleJWKSURL: env.providerURL("IDENTITY_APPLE_JWKS_URL", default: "https://appleid.apple.com/auth/keys"),
            appleTokenURL: env.providerURL("IDENTITY_APPLE_TOKEN_URL", default: "https://appleid.apple.com/auth/token"),
            appleRevokeURL: env.providerURL("IDENTITY_APPLE_REVOKE_URL", default: "https://appleid.apple.com/auth/revoke"),
            googleJWKSURL: env.providerURL("IDENTITY_GOOGLE_JWKS_URL", default: "https://www.googleapis.com/oauth2/v3/certs"),
            firebaseJWKSURL: env.providerURL("IDENTITY_FIREBASE_JWKS_URL",
                default: "https://www.googleapis.com/service_accounts/v1/jwk/securetoken@system.gserviceaccount.com"),
            jwksRefetchInterval: Double(env.int("IDENTITY_JWKS_REFETCH_INTERVAL_SECONDS", default: 60, range: 0...3600)),
            jwksMaximumStaleness: Double(env.int("IDENTITY_JWKS_MAX_STALENESS_SECONDS", default: 86_400, range: 60...2_592_000)),
            nonceLifetimeSeconds: env.int("IDENTITY_NONCE_TTL_SECONDS", default: 300, range: 10...3600),
            outboundTimeoutMilliseconds: env.int("IDENTITY_OUTBOUND_TIMEOUT_MS", default: 5000, range: 100...60_000))
        env.validateOrExit(program: "identity-provider-worker")
        return config
    }
}
