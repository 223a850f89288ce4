import Foundation
import IdentityKit

/// The delivery machinery a channel of the mailer shares with the others: its queues on the
/// broker (the channel's queue, delay queues that dead-letter back into it through
/// `identity.mailer.direct`, a dead-letter queue) and what follows an attempt (the ledger's
/// claim and release, a retry through the next delay queue, or a dead letter). A channel
/// brings only its command type and how one message is sent.
struct DeliveryChannel: Sendable {
    /// `email`, `sms`: the `channel` label of `identity_deliveries_total` and of the logs.
    let name: String
    let queue: String
    let deadQueue: String
    let retryQueue: @Sendable (Int) -> String
    let retryDelays: [Int]
    let ledger: DeliveryLedger
    let counters: Locked<MailerWorker.Counters>

    /// Why an attempt failed: `transient` is retried while delays remain, `permanent` is
    /// dead-lettered at once.
    enum Failure: Error, CustomStringConvertible {
        case transient(String)
        case permanent(String)

        var description: String {
            switch self {
            case .transient(let reason): "transient: \(reason)"
            case .permanent(let reason): "permanent: \(reason)"
            }
        }
    }

    /// Declares the channel's queues and their routes through the mailer's exchange.
    func declare(on channel: AMQPLink.Channel) throws {
        try channel.declareExchange(BusTopology.mailerExchange, type: "direct")
        try channel.declareQueue(queue, durable: true)
        try channel.bindQueue(queue, exchange: BusTopology.mailerExchange, routingKey: queue)
        try channel.declareQueue(deadQueue, durable: true)
        try channel.bindQueue(deadQueue, exchange: BusTopology.mailerExchange, routingKey: deadQueue)
        for level in 0..<retryDelays.count {
            let delay = retryQueue(level)
            try channel.declareDelayQueue(delay, deadLetterThrough: BusTopology.mailerExchange, to: queue)
            try channel.bindQueue(delay, exchange: BusTopology.mailerExchange, routingKey: delay)
        }
    }

    /// One attempt of `command` (`messageId` unique, `attempt` counting from 0): claimed in the
    /// ledger first (a message already sent, or being sent by another worker, is dropped), then
    /// `send`; the follow-ups say what happens next.
    func attempt<Command: ProtoMessage>(_ command: Command, messageId: String, appId: String, attempt: Int,
                                        fields: [String: String], nextAttempt: (Command) -> Command,
                                        send: () throws(Failure) -> Void) -> [OutgoingMessage] {
        do {
            guard try ledger.claim(messageId: messageId, appId: appId) else {
                counters.withLock { $0.duplicatesDropped += 1 }
                ServiceMetrics.deliveries.inc(name, "duplicate")
                Log.info("\(name): already sent or being sent; dropped", fields)
                return []
            }
        } catch {
            return failed(nextAttempt(command), attempt: attempt, .transient(String(describing: error)), fields)
        }
        do {
            try send()
        } catch {
            try? ledger.release(messageId: messageId)
            return failed(nextAttempt(command), attempt: attempt, error, fields)
        }
        // Sent: a failure to record it only risks a duplicate on redelivery, never a loss.
        try? ledger.markSent(messageId: messageId)
        counters.withLock { $0.sent += 1 }
        ServiceMetrics.deliveries.inc(name, "sent")
        Log.info("\(name): sent", fields)
        return []
    }

    /// A retry through the next delay queue, or the dead-letter queue.
    private func failed<Command: ProtoMessage>(_ next: Command, attempt: Int, _ failure: Failure,
                                               _ fields: [String: String]) -> [OutgoingMessage] {
        let logged = fields.merging(["attempt": String(attempt), "error": failure.description]) { $1 }
        if case .transient = failure, attempt < retryDelays.count {
            counters.withLock { $0.retried += 1 }
            ServiceMetrics.deliveries.inc(name, "retried")
            Log.warning("\(name): delivery failed; will retry", logged)
            return message(next, fields, queue: retryQueue(attempt), expiration: retryDelays[attempt]).map { [$0] } ?? []
        }
        counters.withLock { $0.deadLettered += 1 }
        ServiceMetrics.deliveries.inc(name, "dead_lettered")
        Log.error("\(name): dead-lettered", logged)
        return message(next, fields, queue: deadQueue, expiration: nil).map { [$0] } ?? []
    }

    private func message<Command: ProtoMessage>(_ command: Command, _ fields: [String: String], queue: String,
                                                expiration: Int?) -> OutgoingMessage? {
        guard let body = try? ProtoJSON.encode(command) else { return nil }
        var message = OutgoingMessage(exchange: BusTopology.mailerExchange, routingKey: queue,
                                      type: Command.protoName, body: body)
        message.messageId = fields["message_id"] ?? ""
        message.appId = fields["app_id"] ?? ""
        message.expirationMilliseconds = expiration
        message.persistent = true
        return message
    }
}
