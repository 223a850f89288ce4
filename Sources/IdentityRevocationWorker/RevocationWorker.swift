import Foundation
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
                switch message.type {
                case RevocationV1.EndSession.protoName:
                    let command = try ProtoJSON.decode(RevocationV1.EndSession.self, from: message.body)
                    try authority.check(message, appId: command.appId, uid: command.uid)
                    return try .init(sessions.endOne(command))
                case RevocationV1.EndAllSessions.protoName:
                    let command = try ProtoJSON.decode(RevocationV1.EndAllSessions.self, from: message.body)
                    try authority.check(message, appId: command.appId, uid: command.uid)
                    return try .init(sessions.endAll(command))
                case RevocationV1.UnregisterDevice.protoName:
                    let command = try ProtoJSON.decode(RevocationV1.UnregisterDevice.self, from: message.body)
                    try authority.check(message, appId: command.appId, uid: command.uid)
                    return try .init(sessions.unregister(command))
                case RevocationV1.RevokeAppleToken.protoName:
                    return .none(followUps: apple.handle(try ProtoJSON.decode(RevocationV1.RevokeAppleToken.self,
                                                                              from: message.body)))
                default:
                    return nil
                }
            }
        }
        relay = try OutboxRelay(url: configuration.common.amqpURL, heartbeatSeconds: configuration.common.amqpHeartbeatSeconds,
                                pool: pool)
        purge = RetentionPurge(store: RetentionStore(pool: pool),
                               periods: RetentionStore.Periods(keep: configuration.retentionSeconds,
                                                               keepGuests: configuration.guestRetentionSeconds,
                                                               keepKnownDevices: configuration.knownDeviceRetentionSeconds),
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
        Log.info("apple revocation counters", ["revoked": String(apple.revoked), "retried": String(apple.retried),
                                               "codes_exchanged": String(apple.codesExchanged),
                                               "dead_lettered": String(apple.deadLettered)])
    }
}
