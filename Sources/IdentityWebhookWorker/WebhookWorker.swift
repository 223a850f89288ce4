import Foundation
import IdentityCredentials
import IdentityKit
import IdentityOutbound

/// The webhook worker: its own durable queue `identity.webhooks.events`, bound to every event of
/// `identity.events`, is turned into pending deliveries (`EventIntake`), which `DeliveryLoop`
/// signs (Standard Webhooks) and delivers to the apps' endpoints, retrying on its schedule.
public final class WebhookWorker: Service {
    public static let queue = "identity.webhooks.events"

    private let pool: PGPool
    private let consumer: CommandConsumer
    private let loop: DeliveryLoop
    private let timeoutMilliseconds: Int

    public init(configuration: WebhookWorkerConfiguration) throws {
        let pool = PGPool(url: configuration.common.databaseURL, size: configuration.common.databasePoolSize)
        self.pool = pool
        timeoutMilliseconds = configuration.timeoutMilliseconds
        OutboundHTTP.initialize()
        let ownUser = try AMQPEndpoints(configuration.common.amqpURL).user
        let intake = EventIntake(pool: pool, trustedPublishers: configuration.eventPublishers.union([ownUser]))
        // One event at a time, in the order the relay published them: the rows' ids keep it.
        consumer = try CommandConsumer(url: configuration.common.amqpURL,
                                       heartbeatSeconds: configuration.common.amqpHeartbeatSeconds,
                                       queue: Self.queue, name: "webhook-worker", concurrency: 1, setup: { channel in
            try channel.declareExchange(EventOutbox.exchange, type: "topic")
            try channel.bindQueue(Self.queue, exchange: EventOutbox.exchange, routingKey: "#")
        }) { message in
            intake.take(message)
            return .none()
        }
        loop = DeliveryLoop(pool: pool, http: OutboundHTTP(timeoutMilliseconds: configuration.timeoutMilliseconds),
                            seal: WebhookSecretSeal(subKey: configuration.secretKey),
                            settings: .init(concurrency: configuration.concurrency,
                                            appConcurrency: configuration.appConcurrency,
                                            endpointConcurrency: configuration.endpointConcurrency,
                                            retrySchedule: configuration.retrySchedule,
                                            pollSeconds: Double(configuration.pollMilliseconds) / 1000,
                                            policy: configuration.common.outboundAddresses))
        WebhookMetrics.declare()
        WebhookMetrics.reportBacklog(pool: pool)
    }

    public func start() {
        consumer.start()
        loop.start()
    }

    public var readinessChecks: [OperationsListener.Check] { [Readiness.store(pool), Readiness.consuming(consumer)] }

    public var stopTimeLimit: Double { Double(timeoutMilliseconds) / 1000 + 30 }

    public func stop() {
        consumer.stop()
        loop.stop(timeout: Double(timeoutMilliseconds) / 1000 + 5)
    }
}
