import Foundation
import IdentityCredentials
import IdentityKit
import IdentityOutbound

/// The revocation worker: ends sessions on command (each end committed with its
/// `session.revoked` event before the reply), removes push devices, revokes deleted accounts'
/// Apple tokens at Apple, relays the event outbox to the broker, and purges what retention no
/// longer needs (`RetentionPurge`). The Apple revocation counters are kept for the metrics
/// endpoint.
public final class RevocationWorker: Service {
    private let consumer: CommandConsumer
    private let pool: PGPool
    private let relay: OutboxRelay
    private let purge: RetentionPurge
    private let appleCounters = Locked(AppleRevocation.Counters())

    public init(configuration: RevocationWorkerConfiguration) throws {
        let pool = PGPool(url: configuration.common.databaseURL, size: configuration.common.databasePoolSize)
        self.pool = pool
        OutboundHTTP.initialize()
        let sessions = SessionEnding(pool: pool, sessions: SessionStore(pool: pool), devices: DeviceStore(pool: pool))
        let apple = AppleRevocation(settings: ProviderSettingsStore(pool: pool),
                                    apple: AppleClient(tokenURL: configuration.appleTokenURL,
                                                       revokeURL: configuration.appleRevokeURL,
                                                       http: OutboundHTTP(timeoutMilliseconds: configuration.outboundTimeoutMilliseconds)),
                                    masterKey: configuration.masterKey,
                                    retryDelays: configuration.appleRevokeRetryDelaysMilliseconds,
                                    counters: appleCounters)
        let levels = configuration.appleRevokeRetryDelaysMilliseconds.count
        // Ending a user's sessions or removing their device acts for that user: only with their
        // access token in the message (CallerAuthority).
        let authority = CallerAuthority(apps: AppStore(pool: pool), secretKeys: SecretKeyStore(pool: pool))
        let handlers = RevocationHandlers(sessions: sessions, apple: apple)
        consumer = try CommandConsumer(url: configuration.common.amqpURL,
                                       heartbeatSeconds: configuration.common.amqpHeartbeatSeconds,
                                       queue: BusTopology.revocationCommands,
                                       name: "revocation-worker", concurrency: configuration.concurrency, setup: { channel in
            try channel.declareQueue(BusTopology.revocationDead, durable: true)
            for level in 0..<levels {
                try channel.declareDelayQueue(BusTopology.revocationRetry(level), deadLetterTo: BusTopology.revocationCommands)
            }
        }) { message in
            CommandReplies.answer(message) { message in
                guard let entry = RevocationCommandDispatch.table[message.type] else { return nil }
                return try entry(handlers, authority, message)
            }
        }
        relay = try OutboxRelay(url: configuration.common.amqpURL, heartbeatSeconds: configuration.common.amqpHeartbeatSeconds,
                                pool: pool)
        purge = RetentionPurge(store: RetentionStore(pool: pool),
                               periods: RetentionStore.Periods(keep: configuration.retentionSeconds,
                                                               keepGuests: configuration.guestRetentionSeconds,
                                                               keepKnownDevices: configuration.knownDeviceRetentionSeconds,
                                                               keepWebhookDeliveries: configuration.webhookDeliveryRetentionSeconds),
                               interval: Double(configuration.purgeIntervalSeconds))
        OutboxRelay.reportBacklog(pool: pool)
    }

    public func start() {
        relay.start()
        consumer.start()
        purge.start()
    }

    public var readinessChecks: [OperationsListener.Check] { [Readiness.store(pool), Readiness.consuming(consumer)] }

    public func stop() {
        purge.stop()
        consumer.stop()
        relay.stop()
        let apple = appleCounters.withLock { $0 }
        Log.info("apple revocation counters", ["revoked": apple.revoked, "retried": apple.retried,
                                               "codes_exchanged": apple.codesExchanged,
                                               "dead_lettered": apple.deadLettered])
    }
}

/// The revocation worker's handler of each command (`RevocationCommandHandlers`, generated from
/// proto/): the caller checks ran in `RevocationCommandDispatch` before any of these.
struct RevocationHandlers: RevocationCommandHandlers {
    let sessions: SessionEnding
    let apple: AppleRevocation

    func handle(_ command: RevocationV1.EndSession, _ message: BusMessage) throws -> CommandConsumer.Reply {
        try .init(sessions.endOne(command))
    }

    func handle(_ command: RevocationV1.EndAllSessions, _ message: BusMessage) throws -> CommandConsumer.Reply {
        try .init(sessions.endAll(command))
    }

    func handle(_ command: RevocationV1.UnregisterDevice, _ message: BusMessage) throws -> CommandConsumer.Reply {
        try .init(sessions.unregister(command))
    }

    func handle(_ command: RevocationV1.RevokeAppleToken, _ message: BusMessage) throws -> CommandConsumer.Reply {
        .none(followUps: apple.handle(command))
    }
}
