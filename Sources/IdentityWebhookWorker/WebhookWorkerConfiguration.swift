import Foundation
import IdentityKit

/// Settings of `identity-webhook-worker`, from `IDENTITY_*` variables.
public struct WebhookWorkerConfiguration: Sendable {
    public var common: CommonConfiguration
    /// Opens the endpoints' sealed secrets: the webhook-secret sub-key
    /// (`identityctl keys webhook-secret-key`), never the master key.
    public var secretKey: [UInt8]
    /// Deliveries in flight at once, in all.
    public var concurrency: Int
    /// Deliveries in flight at once for one app: an app's endpoints, however many and however
    /// slow, leave the rest of `concurrency` to the other apps.
    public var appConcurrency: Int
    /// Deliveries in flight at once to one endpoint: a slow endpoint holds at most these.
    public var endpointConcurrency: Int
    public var timeoutMilliseconds: Int
    /// Seconds between attempts (`WebhookRules.defaultRetrySchedule`).
    public var retrySchedule: [Double]
    public var pollMilliseconds: Int
    /// Broker users whose events are believed (`user_id`, which RabbitMQ checks against the
    /// publishing connection's login): the outbox relay's. Anyone else able to write to the
    /// default exchange could otherwise put a made-up event on this queue and have it signed.
    public var eventPublishers: Set<String>

    public static func fromEnvironment() -> WebhookWorkerConfiguration {
        var env = EnvironmentReader()
        let concurrency = env.int("IDENTITY_WEBHOOK_CONCURRENCY", default: 32, range: 1...512)
        let scheduleText = env.string("IDENTITY_WEBHOOK_RETRY_SCHEDULE", default: "")
        var schedule = WebhookRules.defaultRetrySchedule
        if !scheduleText.isEmpty {
            if let parsed = WebhookRules.parseSchedule(scheduleText) { schedule = parsed } else {
                env.fail("IDENTITY_WEBHOOK_RETRY_SCHEDULE=\(scheduleText) must be positive durations, comma-separated (250ms, 5s, 30m, 2h)")
            }
        }
        let config = WebhookWorkerConfiguration(
            // The intake and the poller hold one connection each; every delivery one while it records.
            common: CommonConfiguration(reading: &env, defaultPoolSize: min(concurrency, 16) + 2),
            secretKey: env.key32("IDENTITY_WEBHOOK_SECRET_KEY", required: true) ?? [],
            concurrency: concurrency,
            appConcurrency: min(env.int("IDENTITY_WEBHOOK_APP_CONCURRENCY", default: 8, range: 1...512), concurrency),
            endpointConcurrency: env.int("IDENTITY_WEBHOOK_ENDPOINT_CONCURRENCY", default: 4, range: 1...64),
            timeoutMilliseconds: env.int("IDENTITY_WEBHOOK_TIMEOUT_MS", default: 10_000, range: 100...30_000),
            retrySchedule: schedule,
            pollMilliseconds: env.int("IDENTITY_WEBHOOK_POLL_MS", default: 200, range: 10...10_000),
            eventPublishers: RepublishTrust.brokerUsers(env.string("IDENTITY_AMQP_EVENT_PUBLISHERS",
                                                                   default: "identity-revocation-worker")))
        env.validateOrExit(program: "identity-webhook-worker")
        return config
    }
}
