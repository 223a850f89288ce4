import Foundation
import IdentityCredentials
import IdentityKit
import IdentityOutbound

/// The mailer worker: one consumer per delivery channel it runs (`IDENTITY_MAILER_CHANNELS`,
/// default all), each on its own queue (`identity.mailer.email`, `identity.mailer.push`), so
/// operators scale channels apart. A temporary failure goes back through the channel's delay
/// queues (never a sleeping thread); a permanent one, or the last retry, goes to the channel's
/// dead letters (`ChannelQueues`). The counters are kept for the metrics endpoint.
public final class MailerWorker: Service {
    public struct Counters: Sendable {
        public var sent = 0
        public var retried = 0
        public var deadLettered = 0
        public var duplicatesDropped = 0
    }

    private let consumers: [CommandConsumer]
    private let pool: PGPool
    private let counters: Locked<Counters>
    /// How long a stop waits for the deliveries under way: one SMTP (or push, or SMS) timeout and a
    /// margin, so a delivery is finished (or fails and is retried) rather than abandoned
    /// mid-send, which would leave it claimed in the ledger and make the next worker drop it.
    private let drainTimeout: Double

    public var snapshot: Counters { counters.withLock { $0 } }

    public init(configuration: MailerWorkerConfiguration) throws {
        OutboundHTTP.initialize()
        let pool = PGPool(url: configuration.common.databaseURL, size: configuration.common.databasePoolSize)
        self.pool = pool
        let counters = Locked(Counters())
        self.counters = counters
        drainTimeout = max(10, Double(max(configuration.smtp?.timeoutMilliseconds ?? 0,
                                          configuration.push.timeoutMilliseconds,
                                          configuration.sms.timeoutMilliseconds)) / 1000 + 5)
        let delays = configuration.retryDelaysMilliseconds
        var consumers: [CommandConsumer] = []
        for channel in configuration.channels {
            let queues = ChannelQueues(channel: channel, retryDelays: delays)
            let handler = try Self.handler(for: channel, configuration: configuration, pool: pool, queues: queues,
                                           counters: counters)
            consumers.append(try Self.consumer(queue: channel.queue, name: "mailer-\(channel.name)", configuration,
                                               setup: queues.declare, handler: handler))
            if let legacy = channel.legacyQueue {
                consumers.append(try Self.consumer(queue: legacy, name: "mailer-\(channel.name)-legacy", configuration,
                                                   setup: { try queues.declareLegacy(legacy, on: $0) }, handler: handler))
            }
        }
        self.consumers = consumers
    }

    private static func consumer(queue: String, name: String, _ configuration: MailerWorkerConfiguration,
                                 setup: @escaping @Sendable (AMQPLink.Channel) throws -> Void,
                                 handler: @escaping CommandConsumer.Handler) throws -> CommandConsumer {
        try CommandConsumer(url: configuration.common.amqpURL, heartbeatSeconds: configuration.common.amqpHeartbeatSeconds,
                            queue: queue, name: name, concurrency: configuration.concurrency,
                            outboundWaits: configuration.hooks.limits.total, setup: setup, handler: handler)
    }

    /// What a channel does with a message of its queue.
    private static func handler(for channel: DeliveryChannel, configuration: MailerWorkerConfiguration, pool: PGPool,
                                queues: ChannelQueues, counters: Locked<Counters>) throws -> CommandConsumer.Handler {
        switch channel {
        case .push:
            let http = OutboundHTTP(timeoutMilliseconds: configuration.push.timeoutMilliseconds)
            let delivery = PushDelivery(
                apps: AppStore(pool: pool), settings: MailSettingsStore(pool: pool), pushSettings: PushSettingsStore(pool: pool),
                devices: DeviceStore(pool: pool), pool: pool, ledger: DeliveryLedger(pool: pool),
                apnsClient: APNsClient(baseURL: configuration.push.apnsURL, http: http, caFile: configuration.push.caFile),
                fcmClient: FCMClient(baseURL: configuration.push.fcmURL, tokenURL: configuration.push.fcmTokenURL, http: http,
                                     caFile: configuration.push.caFile),
                credentialKey: configuration.push.credentialKey, queues: queues, counters: counters)
            return Self.dispatching(to: ChannelHandlers(channel: channel, push: delivery))
        case .sms:
            let delivery = SmsDelivery.make(configuration: configuration, pool: pool, queues: queues, counters: counters)
            return Self.dispatching(to: ChannelHandlers(channel: channel, sms: delivery))
        default:
            let transport: MailTransport = configuration.smtp.map { SMTPTransport(client: SMTPClient(settings: $0)) }
                ?? FileTransport(directory: configuration.mailDirectory)
            if configuration.smtp == nil {
                Log.info("no IDENTITY_SMTP_HOST: writing mail as .eml files", ["directory": configuration.mailDirectory])
            }
            let delivery = MailDelivery(seal: MailPayloadSeal(key: configuration.mailPayloadKey),
                                        apps: AppStore(pool: pool), settings: MailSettingsStore(pool: pool),
                                        ledger: DeliveryLedger(pool: pool), transport: transport,
                                        defaultFromName: configuration.defaultFromName,
                                        defaultFromAddress: configuration.defaultFromAddress, queues: queues,
                                        counters: counters, hook: SendHook.make(configuration: configuration, pool: pool))
            return Self.dispatching(to: ChannelHandlers(channel: channel, email: delivery))
        }
    }

    /// A channel's consumer: the generated dispatch table finds the handler by the message's
    /// type. A message nobody can read (unknown type, bad body, another channel's kind) is
    /// dropped with a warning: no reply is awaited, and retrying would not make it readable.
    private static func dispatching(to handlers: ChannelHandlers) -> CommandConsumer.Handler {
        { message in
            if let entry = MailerCommandDispatch.table[message.type], let reply = try? entry(handlers, message) {
                return reply
            }
            Log.warning("mailer: dropping a message it cannot read",
                        ["type": message.type, "channel": handlers.channel.name])
            return .none()
        }
    }

    public func start() { consumers.forEach { $0.start() } }
    public var stopTimeLimit: Double { drainTimeout + 30 }
    public var readinessChecks: [OperationsListener.Check] {
        let consumers = consumers
        return [Readiness.store(pool), (name: "broker", check: { @Sendable in consumers.allSatisfy(\.isConsuming) })]
    }
    public func stop() {
        // Every channel drains at once: the slowest delivery bounds the stop, not their sum.
        DispatchQueue.concurrentPerform(iterations: consumers.count) { consumers[$0].stop(drainTimeout: drainTimeout) }
        let counters = snapshot
        Log.info("mailer counters", ["sent": counters.sent, "retried": counters.retried,
                                     "dead_lettered": counters.deadLettered,
                                     "duplicates_dropped": counters.duplicatesDropped])
    }
}

/// The mailer's handlers for one channel's consumer: only that channel's delivery is set, and a
/// command of another channel's kind is refused (`MailerWorker.dispatching` drops it).
struct ChannelHandlers: MailerCommandHandlers {
    struct OtherChannel: Error {}

    let channel: DeliveryChannel
    var email: MailDelivery?
    var push: PushDelivery?
    var sms: SmsDelivery?

    func handle(_ command: MailerV1.SendEmail, _ message: BusMessage) throws -> CommandConsumer.Reply {
        guard let email else { throw OtherChannel() }
        return .none(followUps: email.handle(command))
    }

    func handle(_ command: MailerV1.SendPush, _ message: BusMessage) throws -> CommandConsumer.Reply {
        guard let push else { throw OtherChannel() }
        return .none(followUps: push.handle(command))
    }

    func handle(_ command: MailerV1.SendSms, _ message: BusMessage) throws -> CommandConsumer.Reply {
        guard let sms else { throw OtherChannel() }
        return .none(followUps: sms.handle(command))
    }
}
