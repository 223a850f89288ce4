import Foundation

/// A worker's side: consumes a durable command queue with at most `concurrency` commands in
/// flight, runs each on a thread of its own pool, publishes the reply to the caller's
/// `reply_to`, and only then acks. A worker that dies mid-command leaves the message unacked,
/// so the broker hands it to another worker. A worker that is stopped drains (`stop`).
///
/// A command that keeps coming back (it killed or stalled every worker that took it: a poisoned
/// command) is not run again once a quorum queue has handed it out `deliveryLimit` times: it is
/// refused without requeue, which the queue's policy turns into a move to its dead-letter queue
/// (`BusTopology.deadLetters(of:)`), with an error line and `identity_commands_dead_lettered_total`.
/// The policy's own `delivery-limit` (one more) is the broker's backstop.
public final class CommandConsumer: Sendable {
    /// The reply to a command: the AMQP type and the proto3 JSON body.
    public struct Reply: Sendable {
        public let type: String
        public let body: Data
        /// Messages published just before the reply (mail to send, a retry): they go out on the
        /// same channel, so they are lost only together with the reply, and the caller's 503
        /// then tells it to try again.
        public var followUps: [OutgoingMessage] = []

        public init<M: ProtoMessage>(_ message: M) throws {
            type = M.protoName
            body = try ProtoJSON.encode(message)
        }

        private init(type: String, body: Data) {
            self.type = type
            self.body = body
        }

        /// For commands no one waits on: only the follow-ups are published.
        public static func none(followUps: [OutgoingMessage] = []) -> Reply {
            var reply = Reply(type: "", body: Data())
            reply.followUps = followUps
            return reply
        }

        public func with(_ followUp: OutgoingMessage?) -> Reply {
            var copy = self
            if let followUp { copy.followUps.append(followUp) }
            return copy
        }

        /// An internal error with a hand-written body, for when encoding itself failed.
        public static let empty = Reply(type: "identity.common.v1.Error",
                                        body: Data(#"{"code":"auth/internal","status":500}"#.utf8))
    }

    public typealias Handler = @Sendable (BusMessage) -> Reply

    private let link: AMQPLink
    private let workQueue: CommandThreads
    private let commands: InFlightCommands
    private let consumerTag: String
    private let name: String

    /// `outboundWaits`: how many of its commands may wait on another host at once beyond
    /// `concurrency` (`WorkerSlots`): the broker hands out `concurrency + outboundWaits`
    /// commands, of which at most `concurrency` run on this process's cores at any moment.
    public init(url: String, heartbeatSeconds: Int, queue: String, name: String, concurrency: Int, outboundWaits: Int = 0,
                deliveryLimit: Int = CommandConsumer.deliveryLimit,
                setup extraSetup: @escaping @Sendable (AMQPLink.Channel) throws -> Void = { _ in },
                handler: @escaping Handler) throws {
        let commands = InFlightCommands()
        let consumerTag = "\(name).\(ProcessInfo.processInfo.hostName).\(getpid()).\(Identifiers.nowULID())"
        self.commands = commands
        self.consumerTag = consumerTag
        self.name = name
        let workQueue = CommandThreads(name: "\(name)-commands", count: concurrency + outboundWaits)
        let slots = outboundWaits > 0 ? WorkerSlots(count: concurrency) : nil
        let sameCommand = SameCommandGate()
        self.workQueue = workQueue
        let linkBox = LinkBox()
        let link = try AMQPLink(url: url, name: name, heartbeatSeconds: heartbeatSeconds, setup: { channel in
            try channel.declareQueue(queue, durable: true)
            try channel.declareQueue(BusTopology.deadLetters(of: queue), durable: true)
            try channel.prefetch(UInt16(min(concurrency + outboundWaits, Int(UInt16.max))))
            try extraSetup(channel)
            // A stopping worker that reconnects takes no new commands.
            guard !commands.isStopping else { return }
            try channel.consume(queue, autoAck: false, consumerTag: consumerTag)
        }, onDelivery: { message in
            // The prefetch (and the slots, when commands may wait outside) bounds how many run at
            // once; the I/O thread never runs a command.
            workQueue.async {
                guard let link = linkBox.link else { return }
                if message.deliveryCount >= deliveryLimit {
                    link.send(.deadLetter(deliveryTag: message.deliveryTag, linkGeneration: message.linkGeneration))
                    ServiceMetrics.deadLettered.inc(name, ServiceMetrics.commandType(message.type))
                    Log.error("command dead-lettered: delivery limit reached", [
                        "request_id": message.requestId, "consumer": name, "type": message.type,
                        "deliveries": message.deliveryCount,
                        "dead_letter_queue": BusTopology.deadLetters(of: queue)])
                    return
                }
                guard commands.begin() else {
                    link.send(.requeue(deliveryTag: message.deliveryTag, linkGeneration: message.linkGeneration))
                    return
                }
                // After the ack is queued: the drain then knows the link has it to send.
                defer { commands.end() }
                let started = DispatchTime.now().uptimeNanoseconds
                ServiceMetrics.inFlight.add(1, name)
                if message.redelivered { ServiceMetrics.redeliveries.inc(name, ServiceMetrics.commandType(message.type)) }
                // Every line the handler logs carries the request id that came with the command.
                let turn = Log.withRequestId(message.requestId) {
                    CommandDeadline.run(expirationMilliseconds: message.expirationMilliseconds) {
                        sameCommand.run(message.messageId) {
                            Self.take(message, slots: slots, link: link, stopping: { commands.isStopping }, handler)
                        }
                    }
                }
                let reply: Reply
                switch turn {
                case .ran(let answered):
                    reply = answered
                case .connectionLost:
                    ServiceMetrics.inFlight.add(-1, name)
                    Log.info("command not run: its connection was lost while it waited; the broker redelivers it",
                             ["request_id": message.requestId, "consumer": name, "type": message.type])
                    return
                case .stopping:
                    ServiceMetrics.inFlight.add(-1, name)
                    link.send(.requeue(deliveryTag: message.deliveryTag, linkGeneration: message.linkGeneration))
                    return
                }
                for var followUp in reply.followUps {
                    // The request id travels on, to the mailer's (or the next worker's) lines.
                    if followUp.requestId.isEmpty { followUp.requestId = message.requestId }
                    link.send(.publish(followUp))
                }
                if !message.replyTo.isEmpty && !reply.type.isEmpty {
                    var outgoing = OutgoingMessage(exchange: "", routingKey: message.replyTo, type: reply.type, body: reply.body)
                    outgoing.correlationId = message.correlationId
                    outgoing.messageId = Identifiers.nowULID()
                    outgoing.appId = message.appId
                    outgoing.requestId = message.requestId
                    link.send(.publish(outgoing))
                }
                link.send(.ack(deliveryTag: message.deliveryTag, linkGeneration: message.linkGeneration))
                ServiceMetrics.inFlight.add(-1, name)
                ServiceMetrics.commands.inc(name, ServiceMetrics.commandType(message.type), ServiceMetrics.outcome(replyType: reply.type, body: reply.body))
                ServiceMetrics.commandDuration.observeSince(started, name, ServiceMetrics.commandType(message.type))
                Log.debug("command handled", ["request_id": message.requestId, "consumer": name, "type": message.type,
                                              "redelivered": message.redelivered ? "1" : "0",
                                              "took_ms": (DispatchTime.now().uptimeNanoseconds - started) / 1_000_000])
            }
        })
        linkBox.link = link
        self.link = link
    }

    /// What became of a command handed to a worker thread.
    private enum Turn {
        case ran(Reply)
        /// Its connection ended while it waited for a slot: the broker has handed it out again
        /// (as redelivered, which the flows answer from what the first run committed), and two
        /// copies must not run at once.
        case connectionLost
        /// A stop began while it waited for a slot: it goes back to the queue at once, for
        /// another worker, and the drain waits only for what runs.
        case stopping
    }

    /// Runs `message` in a slot (when the worker counts them), unless it can no longer be acked
    /// or the worker is stopping by the time it gets one.
    private static func take(_ message: BusMessage, slots: WorkerSlots?, link: AMQPLink, stopping: () -> Bool,
                             _ handler: Handler) -> Turn {
        func turn() -> Turn {
            guard link.isCurrent(generation: message.linkGeneration) else { return .connectionLost }
            if slots != nil, stopping() { return .stopping }
            return .ran(handler(message))
        }
        return slots.map { $0.run(turn) } ?? turn()
    }

    public func start() { link.start() }

    /// `IDENTITY_AMQP_DELIVERY_LIMIT` (`CommonConfiguration.applyToProcess`): how many failed
    /// deliveries a command gets before it is dead-lettered.
    public static var deliveryLimit: Int { configuredDeliveryLimit.withLock { $0 } }
    static let configuredDeliveryLimit = Locked(5)

    /// Stops consuming (basic.cancel), hands back what has not started, waits at most
    /// `drainTimeout` seconds for the commands running to reply and ack, then closes the
    /// connection (anything still unacked is requeued by the broker) and joins the I/O thread.
    public func stop(drainTimeout: Double = 10) {
        let started = DispatchTime.now().uptimeNanoseconds
        commands.stopAccepting()
        link.send(.cancel(consumerTag: consumerTag))
        let tally = commands.waitUntilIdle(timeout: drainTimeout)
        link.stop()
        Log.info("command consumer drained", [
            "consumer": name, "handled": tally.handled, "running_at_stop": tally.running, "finished": tally.finished,
            "handed_back": tally.handedBack, "abandoned": tally.abandoned,
            "took_ms": (DispatchTime.now().uptimeNanoseconds - started) / 1_000_000])
    }
    public var isConnected: Bool { link.isConnected }
    /// Connected and still taking commands (the readiness of a worker's broker side).
    public var isConsuming: Bool { link.isConnected && !commands.isStopping }
}

/// Lets the delivery closure reach the link it is given to (set once, before start).
private final class LinkBox: @unchecked Sendable {
    var link: AMQPLink?
}
