import Foundation
import IdentityKit
import IdentityOutbound

/// The mailer worker: consumes `identity.mailer.commands`, renders each mail with the app's
/// settings and delivers it. A temporary failure goes back through the broker's delay queues
/// (never a sleeping thread); a permanent one, or the last retry, goes to
/// `identity.mailer.dead`. The counters are kept for the metrics endpoint.
public final class MailerWorker: Service {
    public struct Counters: Sendable {
        public var sent = 0
        public var retried = 0
        public var deadLettered = 0
        public var duplicatesDropped = 0
    }

    private let consumer: CommandConsumer
    /// The SMS channel's consumer (`identity.mailer.sms`, `SmsDelivery`).
    private let smsConsumer: CommandConsumer
    private let pool: PGPool
    private let counters: Locked<Counters>
    /// How long a stop waits for the deliveries under way: one SMTP timeout and a margin, so a
    /// delivery is finished (or fails and is retried) rather than abandoned mid-send, which
    /// would leave it claimed in the ledger and make the next worker drop it.
    private let drainTimeout: Double

    public var snapshot: Counters { counters.withLock { $0 } }

    public init(configuration: MailerWorkerConfiguration) throws {
        OutboundHTTP.initialize()
        let pool = PGPool(url: configuration.common.databaseURL, size: configuration.common.databasePoolSize)
        self.pool = pool
        let transport: MailTransport = configuration.smtp.map { SMTPTransport(client: SMTPClient(settings: $0)) }
            ?? FileTransport(directory: configuration.mailDirectory)
        if configuration.smtp == nil {
            Log.info("no IDENTITY_SMTP_HOST: writing mail as .eml files", ["directory": configuration.mailDirectory])
        }
        let counters = Locked(Counters())
        self.counters = counters
        drainTimeout = max(10, Double(configuration.smtp?.timeoutMilliseconds ?? 0) / 1000 + 5)
        let delivery = MailDelivery(seal: MailPayloadSeal(key: configuration.mailPayloadKey),
                                    apps: AppStore(pool: pool), settings: MailSettingsStore(pool: pool),
                                    ledger: DeliveryLedger(pool: pool), transport: transport,
                                    defaultFromName: configuration.defaultFromName,
                                    defaultFromAddress: configuration.defaultFromAddress,
                                    retryDelays: configuration.retryDelaysMilliseconds, counters: counters)
        let levels = configuration.retryDelaysMilliseconds.count
        consumer = try CommandConsumer(url: configuration.common.amqpURL,
                                       heartbeatSeconds: configuration.common.amqpHeartbeatSeconds,
                                       queue: BusTopology.mailerCommands,
                                       name: "mailer-worker", concurrency: configuration.concurrency, setup: { channel in
            try channel.declareExchange(BusTopology.mailerExchange, type: "direct")
            try channel.bindQueue(BusTopology.mailerCommands, exchange: BusTopology.mailerExchange,
                                  routingKey: BusTopology.mailerCommands)
            try channel.declareQueue(BusTopology.mailerDead, durable: true)
            try channel.bindQueue(BusTopology.mailerDead, exchange: BusTopology.mailerExchange, routingKey: BusTopology.mailerDead)
            for level in 0..<levels {
                let queue = BusTopology.mailerRetry(level)
                try channel.declareDelayQueue(queue, deadLetterThrough: BusTopology.mailerExchange, to: BusTopology.mailerCommands)
                try channel.bindQueue(queue, exchange: BusTopology.mailerExchange, routingKey: queue)
            }
        }) { message in
            guard message.type == MailerV1.SendEmail.protoName,
                  let command = try? ProtoJSON.decode(MailerV1.SendEmail.self, from: message.body) else {
                Log.warning("mailer: dropping a message it cannot read", ["type": message.type])
                return .none()
            }
            return .none(followUps: delivery.handle(command))
        }
        smsConsumer = try SmsDelivery.consumer(configuration: configuration, pool: pool, counters: counters)
    }

    public func start() {
        consumer.start()
        smsConsumer.start()
    }
    public var stopTimeLimit: Double { drainTimeout + 30 }
    public var readinessChecks: [OperationsListener.Check] {
        [Readiness.store(pool), Readiness.consuming(consumer), Readiness.consuming(smsConsumer)]
    }
    public func stop() {
        smsConsumer.stop(drainTimeout: drainTimeout)
        consumer.stop(drainTimeout: drainTimeout)
        let counters = snapshot
        Log.info("mailer counters", ["sent": String(counters.sent), "retried": String(counters.retried),
                                     "dead_lettered": String(counters.deadLettered),
                                     "duplicates_dropped": String(counters.duplicatesDropped)])
    }
}

/// One delivery attempt and what follows it (nothing, a retry, or a dead letter).
struct MailDelivery: Sendable {
    /// Opens the sealed code (the code never travels or rests in clear on the broker).
    let seal: MailPayloadSeal
    let apps: AppStore
    let settings: MailSettingsStore
    let ledger: DeliveryLedger
    let transport: MailTransport
    let defaultFromName: String?
    let defaultFromAddress: String
    let retryDelays: [Int]
    let counters: Locked<MailerWorker.Counters>

    func handle(_ command: MailerV1.SendEmail) -> [OutgoingMessage] {
        let fields = ["message_id": command.messageId, "app_id": command.appId, "kind": command.kind]
        do {
            guard try ledger.claim(messageId: command.messageId, appId: command.appId) else {
                counters.withLock { $0.duplicatesDropped += 1 }
                ServiceMetrics.deliveries.inc("email", "duplicate")
                Log.info("mail already sent or being sent; dropped", fields)
                return []
            }
            let message = try render(command)
            do {
                try transport.deliver(from: message.from, to: command.to, message: message.mime, messageId: command.messageId)
            } catch {
                try? ledger.release(messageId: command.messageId)
                return failed(command, error, fields)
            }
            try ledger.markSent(messageId: command.messageId)
            counters.withLock { $0.sent += 1 }
            ServiceMetrics.deliveries.inc("email", "sent")
            Log.info("mail sent", fields)
            return []
        } catch {
            // The store or the app's settings could not be read: try again later.
            try? ledger.release(messageId: command.messageId)
            return failed(command, .transient(String(describing: error)), fields)
        }
    }

    private func render(_ sent: MailerV1.SendEmail) throws -> (from: String, mime: String) {
        var command = sent
        if !sent.sealedCode.isEmpty {
            command.code = try seal.open(Array(sent.sealedCode), messageId: sent.messageId)
        }
        let app = try apps.find(id: command.appId)
        let mail = try settings.settings(appId: command.appId)
        var link = command.link ?? ""
        if link.isEmpty, command.kind == "email_code", let deepLink = mail.deepLinkURL, !deepLink.isEmpty {
            link = MailRenderer.magicLink(deepLink: deepLink, email: command.to, code: command.code)
        }
        let rendered = MailRenderer().render(kind: command.kind, templates: mail.templates, values: [
            "app_name": app?.name ?? "your app", "code": command.code, "link": link, "email": command.to,
        ])
        // The app's own sender when it set an address, else the worker's default sender.
        let (fromName, fromAddress) = mail.fromAddress.map { (mail.fromName, $0) }
            ?? (mail.fromName ?? defaultFromName, defaultFromAddress)
        return (fromAddress, MIMEMessage.build(fromName: fromName, fromAddress: fromAddress,
                                               to: command.to, subject: rendered.subject, text: rendered.text,
                                               html: rendered.html, messageId: command.messageId))
    }

    /// A retry through the next delay queue, or the dead-letter queue.
    private func failed(_ command: MailerV1.SendEmail, _ failure: SMTPClient.Failure,
                        _ fields: [String: String]) -> [OutgoingMessage] {
        var next = command
        next.attempt += 1
        let attempt = Int(command.attempt)
        if case .transient = failure, attempt < retryDelays.count {
            counters.withLock { $0.retried += 1 }
            ServiceMetrics.deliveries.inc("email", "retried")
            Log.warning("mail delivery failed; will retry", fields.merging(
                ["attempt": String(attempt), "error": failure.description]) { $1 })
            return message(next, queue: BusTopology.mailerRetry(attempt), expiration: retryDelays[attempt]).map { [$0] } ?? []
        }
        counters.withLock { $0.deadLettered += 1 }
        ServiceMetrics.deliveries.inc("email", "dead_lettered")
        Log.error("mail dead-lettered", fields.merging(["attempt": String(attempt), "error": failure.description]) { $1 })
        return message(next, queue: BusTopology.mailerDead, expiration: nil).map { [$0] } ?? []
    }

    private func message(_ command: MailerV1.SendEmail, queue: String, expiration: Int?) -> OutgoingMessage? {
        guard let body = try? ProtoJSON.encode(command) else { return nil }
        var message = OutgoingMessage(exchange: BusTopology.mailerExchange, routingKey: queue,
                                      type: MailerV1.SendEmail.protoName, body: body)
        message.messageId = command.messageId
        message.appId = command.appId
        message.expirationMilliseconds = expiration
        message.persistent = true
        return message
    }
}
