import Foundation

/// The gateway's side of request/reply over AMQP: publishes a command to a worker queue with
/// a correlation id and `reply_to` = direct reply-to, and completes the caller when the reply
/// arrives or the deadline passes, whichever is first. The completion runs exactly once.
public final class BusClient: Sendable {
    public enum Failure: Error, Sendable {
        /// No reply by the deadline, or the broker is not connected: 503, safe to retry.
        case unavailable
    }

    public typealias Completion = @Sendable (Result<BusMessage, Failure>) -> Void

    private let pending = Locked<[String: Completion]>([:])
    private let link: Locked<AMQPLink?> = Locked(nil)
    private let timeouts = DispatchQueue(label: "bus-client-deadlines")

    public init(url: String, heartbeatSeconds: Int) throws {
        let created = try AMQPLink(url: url, name: "gateway", heartbeatSeconds: heartbeatSeconds, setup: { channel in
            // Declared here too, so commands sent before any worker started wait in the queue.
            for queue in BusTopology.commandQueues { try channel.declareQueue(queue, durable: true) }
            try channel.consume(BusTopology.directReplyTo, autoAck: true)
        }, onDelivery: { [weak self] message in
            self?.complete(message)
        })
        link.withLock { $0 = created }
    }

    public func start() { link.withLock { $0 }?.start() }
    public func stop() { link.withLock { $0 }?.stop() }
    public var isConnected: Bool { link.withLock { $0 }?.isConnected ?? false }
    public func waitUntilConnected(timeout: Double) -> Bool {
        link.withLock { $0 }?.waitUntilConnected(timeout: timeout) ?? false
    }

    /// Sends `message` (a command) to `queue` and waits at most `timeout` seconds for a reply.
    public func request<M: ProtoMessage>(_ message: M, queue: String, appId: String, requestId: String,
                                         callerToken: String = "", languages: [String] = [], timeout: Double,
                                         completion: @escaping Completion) {
        guard let body = try? ProtoJSON.encode(message), let link = link.withLock({ $0 }) else {
            ServiceMetrics.unavailable.inc("bus_disconnected")
            completion(.failure(.unavailable))
            return
        }
        let started = DispatchTime.now().uptimeNanoseconds
        // Timed from the publish to the reply or the deadline; the first to come completes.
        let timed: Completion = { result in
            switch result {
            case .success:
                ServiceMetrics.busRoundTrip.observeSince(started, queue, "reply")
            case .failure:
                ServiceMetrics.busRoundTrip.observeSince(started, queue, "timeout")
            }
            completion(result)
        }
        let correlationId = Identifiers.nowULID()
        var outgoing = OutgoingMessage(exchange: "", routingKey: queue, type: M.protoName, body: body)
        outgoing.correlationId = correlationId
        outgoing.replyTo = BusTopology.directReplyTo
        outgoing.messageId = correlationId
        outgoing.expirationMilliseconds = Int(timeout * 1000)
        outgoing.appId = appId
        outgoing.requestId = requestId
        outgoing.callerToken = callerToken
        outgoing.languages = languages
        pending.withLock { $0[correlationId] = timed }
        guard link.send(.publish(outgoing)) else {
            ServiceMetrics.unavailable.inc("bus_disconnected")
            take(correlationId)?(.failure(.unavailable))
            return
        }
        timeouts.asyncAfter(deadline: .now() + timeout) { [weak self] in
            guard let waiting = self?.take(correlationId) else { return }
            ServiceMetrics.unavailable.inc("bus_timeout")
            waiting(.failure(.unavailable))
        }
    }

    private func complete(_ reply: BusMessage) {
        // A reply that comes after its deadline finds nothing pending and is dropped.
        take(reply.correlationId)?(.success(reply))
    }

    private func take(_ correlationId: String) -> Completion? {
        pending.withLock { $0.removeValue(forKey: correlationId) }
    }
}
