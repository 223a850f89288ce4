import Foundation

/// A message received from the broker, with the properties every message carries
/// (docs/architecture.md, "Processes": messages). `deliveryTag` and `linkGeneration` identify it
/// for the ack.
public struct BusMessage: Sendable {
    public var type: String
    public var body: Data
    public var correlationId: String
    public var replyTo: String
    public var messageId: String
    public var appId: String
    public var requestId: String
    /// The access token of the user a gateway command acts for (`OutgoingMessage.callerToken`).
    public var callerToken: String
    /// The languages of the request behind a command, best first (`OutgoingMessage.languages`).
    public var languages: [String] = []
    public var deliveryTag: UInt64
    public var linkGeneration: Int
    public var redelivered: Bool
    /// How many times a quorum queue handed this message out before without an ack (its
    /// `x-delivery-count`; 0 on a first delivery and on classic queues, which do not count).
    public var deliveryCount: Int = 0
    /// The routing key it was published with (an event's `<app_id>.<event name>`).
    public var routingKey: String = ""
    /// The broker user that published it, as the message's `user_id` says; RabbitMQ refuses a
    /// `user_id` other than the publishing connection's login, so it is vouched for (empty when
    /// the publisher set none).
    public var publisher: String = ""
    /// A command's expiration: its caller's deadline, counted from the publish (`CommandDeadline`).
    public var expirationMilliseconds: Int?
}

/// A message to publish.
public struct OutgoingMessage: Sendable {
    public var exchange: String
    public var routingKey: String
    public var type: String
    public var body: Data
    public var correlationId: String = ""
    public var replyTo: String = ""
    public var messageId: String = ""
    /// Milliseconds after which the broker drops the message unconsumed (the caller's deadline).
    public var expirationMilliseconds: Int?
    public var appId: String = ""
    public var requestId: String = ""
    /// The access token of the user a command acts for, as the gateway received it: the worker
    /// verifies it again (`CallerAuthority`), so a command's authority over a user rests on that
    /// user's signed token, not on who could publish to the queue. Commands only: their
    /// messages are transient and expire with the caller's deadline.
    public var callerToken: String = ""
    /// The languages of the HTTP request a command comes from, best first (its Accept-Language,
    /// `AcceptLanguage.parse`): the messages a command sends are in one of them when the user
    /// has no stored locale.
    public var languages: [String] = []
    public var persistent: Bool = false
    /// Published again on a new connection because the lost one never confirmed it (`UnconfirmedPublishes`):
    /// it travels as a header, and the receiver counts it as `redelivered` (it may have run).
    public var republished: Bool = false

    public init(exchange: String, routingKey: String, type: String, body: Data) {
        self.exchange = exchange
        self.routingKey = routingKey
        self.type = type
        self.body = body
    }
}

/// Names of the broker's queues and exchanges, in one place.
public enum BusTopology {
    /// The durable queue the token workers compete on.
    public static let tokenCommands = "identity.token.commands"
    /// The durable queue the revocation workers compete on.
    public static let revocationCommands = "identity.revocation.commands"
    /// Every command queue; the gateway declares them all so no command is dropped for want
    /// of a queue when a worker kind has not started yet.
    public static let commandQueues = [tokenCommands, revocationCommands, providerCommands]
        + DeliveryChannel.all.map(\.queue)
    /// The mailer's queue before there was one per channel: mail commands published by a token
    /// worker of the previous version, and mail whose retry was waiting in a delay queue of the
    /// previous version (those dead-letter to this name), still land here during an upgrade, so
    /// the email channel consumes it too (`DeliveryChannel.email.legacyQueue`).
    public static let legacyMailerCommands = "identity.mailer.commands"
    /// The dead letters of the previous version; `identityctl mail replay-dead` replays them
    /// into the email channel.
    public static let legacyMailerDead = "identity.mailer.dead"
    /// The mailer's delay queues dead-letter through this direct exchange (each of its queues is
    /// bound to it by name), and the mailer publishes its retries and dead letters on it: its
    /// broker user has no write on the default exchange (docs/architecture.md: "Broker users"), so it cannot
    /// publish to another worker's queue.
    public static let mailerExchange = "identity.mailer.direct"
    /// Delay queues for retried Apple revocations (dead-lettering into the revocation queue).
    public static func revocationRetry(_ level: Int) -> String { "identity.revocation.retry.\(level)" }
    /// Apple revocations that can never succeed (an authorization code Apple will not exchange).
    public static let revocationDead = "identity.revocation.dead"
    /// The durable queue the provider workers compete on.
    public static let providerCommands = "identity.provider.commands"
    /// Where a command queue's broker policy (scripts/broker-users.sh) dead-letters a command
    /// that reached its delivery limit: `identity.token.commands` → `identity.token.dead`, any
    /// other queue → `<queue>.dead`. The consuming worker declares it.
    public static func deadLetters(of queue: String) -> String {
        queue.hasSuffix(".commands") ? String(queue.dropLast(".commands".count)) + ".dead" : queue + ".dead"
    }
    /// RabbitMQ's direct reply-to pseudo-queue.
    public static let directReplyTo = "amq.rabbitmq.reply-to"
}

/// One way the mailer worker delivers (email, push, SMS): its own durable queue, so operators
/// scale each apart, with its own delay queues and dead letters, all named after the channel.
public struct DeliveryChannel: Sendable, Hashable {
    /// `email`, `push`, `sms`: the queue's last word, the metrics' `channel` label.
    public let name: String

    public static let email = DeliveryChannel(name: "email")
    public static let push = DeliveryChannel(name: "push")
    /// Phone sign-in codes (`SendSms`) through a Twilio-compatible API.
    public static let sms = DeliveryChannel(name: "sms")
    public static let all = [email, push, sms]

    public static func named(_ name: String) -> DeliveryChannel? { all.first { $0.name == name } }

    /// `identity.mailer.<name>`: the commands of this channel.
    public var queue: String { "identity.mailer.\(name)" }
    /// `identity.mailer.<name>.dead`: what failed for good; `identityctl mail replay-dead` replays it.
    public var deadQueue: String { "identity.mailer.\(name).dead" }
    /// `identity.mailer.<name>.delay.<n>`: retry `n` waits here, then dead-letters into `queue`.
    public func retryQueue(_ level: Int) -> String { "identity.mailer.\(name).delay.\(level)" }
    /// The queue of the previous version this channel also drains (email only).
    public var legacyQueue: String? { self == .email ? BusTopology.legacyMailerCommands : nil }
}

public struct BusError: Error, CustomStringConvertible, Sendable {
    public let description: String
    public init(_ description: String) { self.description = description }
}
