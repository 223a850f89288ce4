import Foundation
import IdentityKit

/// The broker side of one delivery channel (`DeliveryChannel`): its queue, delay queues and
/// dead letters, all bound by name to the mailer's direct exchange, and the retry or dead
/// letter that follows a failed attempt. Every channel works the same way; what differs is
/// only how a message is delivered (`Email/`, `Push/`).
struct ChannelQueues: Sendable {
    let channel: DeliveryChannel
    /// Delay before each retry; after the last, the message is dead-lettered.
    let retryDelays: [Int]

    /// Declares and binds the channel's queues (the consumer itself declares `channel.queue`).
    func declare(on bus: AMQPLink.Channel) throws {
        try bus.declareExchange(BusTopology.mailerExchange, type: "direct")
        try bus.bindQueue(channel.queue, exchange: BusTopology.mailerExchange, routingKey: channel.queue)
        try bus.declareQueue(channel.deadQueue, durable: true)
        try bus.bindQueue(channel.deadQueue, exchange: BusTopology.mailerExchange, routingKey: channel.deadQueue)
        for level in retryDelays.indices {
            let queue = channel.retryQueue(level)
            try bus.declareDelayQueue(queue, deadLetterThrough: BusTopology.mailerExchange, to: channel.queue)
            try bus.bindQueue(queue, exchange: BusTopology.mailerExchange, routingKey: queue)
        }
    }

    /// The previous version's queue (email only): declared and bound as it was, so mail that
    /// its token workers publish, and its delay queues dead-letter (routing key
    /// `identity.mailer.commands` on the mailer exchange), is still consumed during an upgrade.
    func declareLegacy(_ queue: String, on bus: AMQPLink.Channel) throws {
        try bus.declareExchange(BusTopology.mailerExchange, type: "direct")
        try bus.bindQueue(queue, exchange: BusTopology.mailerExchange, routingKey: queue)
    }

    /// An Error too, so a channel's transport can throw it typed (`Sms/SmsTransport.swift`).
    enum Failure: Error, Sendable {
        /// May pass (a timeout, a 5xx, a 429): retried through the next delay queue.
        case transient(String)
        /// Will not pass by sending again: dead-lettered at once.
        case permanent(String)

        var description: String {
            switch self {
            case .transient(let text), .permanent(let text): text
            }
        }
    }

    /// What follows a failed attempt `attempt` (0 for the first): the command again through the
    /// next delay queue, or into the dead letters. `command` already carries `attempt + 1`.
    func afterFailure<Command: ProtoMessage>(_ command: Command, messageId: String, appId: String, attempt: Int,
                                             failure: Failure, counters: Locked<MailerWorker.Counters>,
                                             fields: LogFields) -> OutgoingMessage? {
        let logFields = fields.merging(["attempt": attempt, "error": failure.description]) { $1 }
        if case .transient = failure, attempt < retryDelays.count {
            counters.withLock { $0.retried += 1 }
            ServiceMetrics.deliveries.inc(channel.name, "retried")
            Log.warning("\(channel.name) delivery failed; will retry", logFields)
            return message(command, messageId: messageId, appId: appId, queue: channel.retryQueue(attempt),
                           expiration: retryDelays[attempt])
        }
        counters.withLock { $0.deadLettered += 1 }
        ServiceMetrics.deliveries.inc(channel.name, "dead_lettered")
        Log.error("\(channel.name) delivery dead-lettered", logFields)
        return message(command, messageId: messageId, appId: appId, queue: channel.deadQueue, expiration: nil)
    }

    private func message<Command: ProtoMessage>(_ command: Command, messageId: String, appId: String, queue: String,
                                                expiration: Int?) -> OutgoingMessage? {
        guard let body = try? ProtoJSON.encode(command) else { return nil }
        var message = OutgoingMessage(exchange: BusTopology.mailerExchange, routingKey: queue, type: Command.protoName,
                                      body: body)
        message.messageId = messageId
        message.appId = appId
        message.expirationMilliseconds = expiration
        message.persistent = true
        return message
    }
}
