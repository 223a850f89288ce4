import Foundation
import IdentityKit

/// Settings of `identity-revocation-worker`, from `IDENTITY_*` variables.
public struct RevocationWorkerConfiguration: Sendable {
    public var common: CommonConfiguration
    public var concurrency: Int
    /// Unseals Apple refresh tokens and `.p8` keys to revoke at Apple on account deletion.
    public var masterKey: [UInt8]
    public var appleTokenURL: String
    public var appleRevokeURL: String
    public var outboundTimeoutMilliseconds: Int
    /// Delays between tries of an Apple revocation; the last repeats until Apple answers 200.
    public var appleRevokeRetryDelaysMilliseconds: [Int]
    /// Spent or expired nonces, codes and refresh tokens and ended sessions are purged this long
    /// after (kept meanwhile: a spent refresh token presented again must still be recognised
    /// as theft).
    public var retentionSeconds: Int
    /// Guests neither created nor seen within this are deleted (`user.deleted`).
    public var guestRetentionSeconds: Int
    /// Known devices (security alerts) unseen this long are forgotten.
    public var knownDeviceRetentionSeconds: Int
    /// Finished webhook deliveries are purged this long after they finished.
    public var webhookDeliveryRetentionSeconds: Int
    public var purgeIntervalSeconds: Int

    public static func fromEnvironment() -> RevocationWorkerConfiguration {
        var env = EnvironmentReader()
        let cores = ProcessInfo.processInfo.activeProcessorCount
        let concurrency = env.int("IDENTITY_WORKER_CONCURRENCY", default: max(2, cores * 2), range: 1...256)
        // One more connection than commands in flight: the outbox relay holds one.
        let delaysText = env.string("IDENTITY_APPLE_REVOKE_RETRY_DELAYS_MS", default: "5000,30000,120000,600000,3600000")
        let delays = delaysText.split(separator: ",").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
        if delays.isEmpty || delays.contains(where: { $0 < 1 }) {
            env.fail("IDENTITY_APPLE_REVOKE_RETRY_DELAYS_MS=\(delaysText) must be positive milliseconds, comma-separated")
        }
        let config = RevocationWorkerConfiguration(
            common: CommonConfiguration(reading: &env, defaultPoolSize: concurrency + 1), concurrency: concurrency,
            masterKey: env.key32("IDENTITY_MASTER_KEY", required: true) ?? [],
            appleTokenURL: env.providerURL("IDENTITY_APPLE_TOKEN_URL", default: "https://appleid.apple.com/auth/token"),
            appleRevokeURL: env.providerURL("IDENTITY_APPLE_REVOKE_URL", default: "https://appleid.apple.com/auth/revoke"),
            outboundTimeoutMilliseconds: env.int("IDENTITY_OUTBOUND_TIMEOUT_MS", default: 5000, range: 100...60_000),
            appleRevokeRetryDelaysMilliseconds: delays.isEmpty ? [5000] : delays,
            retentionSeconds: env.int("IDENTITY_RETENTION_SECONDS", default: 2_592_000, range: 3600...315_360_000),
            guestRetentionSeconds: env.int("IDENTITY_GUEST_RETENTION_SECONDS", default: 31_536_000,
                                           range: 86_400...315_360_000),
            knownDeviceRetentionSeconds: env.int("IDENTITY_KNOWN_DEVICE_RETENTION_SECONDS", default: 31_536_000,
                                                 range: 86_400...315_360_000),
            webhookDeliveryRetentionSeconds: env.int("IDENTITY_WEBHOOK_DELIVERY_RETENTION_SECONDS", default: 604_800,
                                                     range: 3600...315_360_000),
            purgeIntervalSeconds: env.int("IDENTITY_PURGE_INTERVAL_SECONDS", default: 60, range: 1...86_400))
        env.validateOrExit(program: "identity-revocation-worker")
        return config
    }
}
