import CRabbitMQ
import CRabbitMQShim
import Foundation

/// One AMQP connection and channel, owned by one I/O thread, because rabbitmq-c handles must
/// not be shared across threads. Other threads hand it work (publish, ack) through a queue and
/// an eventfd wake-up; deliveries are handed back through `onDelivery`. Publishing and
/// consuming share channel 1, as RabbitMQ's direct reply-to requires.
///
/// When the broker goes away the thread reconnects — to the next node of `IDENTITY_AMQP_URL`'s
/// list first (`AMQPEndpoints`), with growing delays once every node has refused — and runs
/// `setup` again (declare queues, consume), so a broker restart or a node's loss needs no
/// restart of ours. Acks of messages received on an earlier connection are dropped: the broker
/// redelivers those messages. Channel 1 is in confirm mode: what the broker had not confirmed
/// when the connection went is published again on the new one (`UnconfirmedPublishes`).
///
/// The connection negotiates heartbeats, and the thread never waits longer than a quarter of
/// the interval without calling into rabbitmq-c (which is where heartbeats are sent), so an
/// idle link stays connected.
public final class AMQPLink: Sendable {
    public enum Operation: Sendable {
        case publish(OutgoingMessage)
        case ack(deliveryTag: UInt64, linkGeneration: Int)
        /// Hands a delivery straight back to the queue (basic.reject, requeue), for another
        /// consumer to take now rather than when this connection closes.
        case requeue(deliveryTag: UInt64, linkGeneration: Int)
        /// Refuses a delivery for good (basic.reject, no requeue): the queue's dead-letter
        /// policy moves it to its dead-letter queue (a command past its delivery limit).
        case deadLetter(deliveryTag: UInt64, linkGeneration: Int)
        /// Stops a consumer (basic.cancel): no more deliveries; unacked ones stay ours to settle.
        case cancel(consumerTag: String)
        /// Ends the link once everything queued before it is done (see `stop`).
        case finish
    }

    /// What `setup` may do on a fresh channel.
    public struct Channel {
        fileprivate let connection: amqp_connection_state_t

        // amqp_cstring_bytes keeps the pointer it is given, so each name stays inside
        // withCString for the whole call that uses it.
        /// Declares a queue of the process's queue type (`QueueDeclaration`: quorum by default).
        public func declareQueue(_ name: String, durable: Bool) throws {
            try QueueDeclaration.declare(connection, name, durable: durable)
        }

        /// A queue whose messages, when their per-message expiration passes, dead-letter into
        /// `target` (on the default exchange): a delay line for retries through the broker.
        public func declareDelayQueue(_ name: String, deadLetterTo target: String) throws {
            try QueueDeclaration.declare(connection, name, durable: true, deadLetterExchange: "", deadLetterRoutingKey: target)
        }

        /// A queue whose expired messages dead-letter into `target` through the named exchange
        /// `exchange` (which must route `target` there): a delay line that needs no write on the
        /// default exchange.
        public func declareDelayQueue(_ name: String, deadLetterThrough exchange: String, to target: String) throws {
            try QueueDeclaration.declare(connection, name, durable: true, deadLetterExchange: exchange,
                                         deadLetterRoutingKey: target)
        }

        /// A durable exchange of `type` (direct, topic, ...).
        public func declareExchange(_ name: String, type: String) throws {
            name.withCString { pointer in
                type.withCString { kind in
                    _ = amqp_exchange_declare(connection, 1, amqp_cstring_bytes(pointer), amqp_cstring_bytes(kind),
                                              0, 1, 0, 0, amqp_empty_table)
                }
            }
            try check("exchange.declare \(name)")
        }

        public func bindQueue(_ queue: String, exchange: String, routingKey: String) throws {
            queue.withCString { q in
                exchange.withCString { e in
                    routingKey.withCString { key in
                        _ = amqp_queue_bind(connection, 1, amqp_cstring_bytes(q), amqp_cstring_bytes(e),
                                            amqp_cstring_bytes(key), amqp_empty_table)
                    }
                }
            }
            try check("queue.bind \(queue) to \(exchange)")
        }

        public func prefetch(_ count: UInt16) throws {
            _ = amqp_basic_qos(connection, 1, 0, count, 0)
            try check("basic.qos")
        }

        /// `consumerTag` names the consumer so `Operation.cancel` can stop it; empty lets the
        /// broker choose one.
        public func consume(_ queue: String, autoAck: Bool, consumerTag: String = "") throws {
            queue.withCString { pointer in
                consumerTag.withCString { tag in
                    _ = amqp_basic_consume(connection, 1, amqp_cstring_bytes(pointer),
                                           consumerTag.isEmpty ? amqp_empty_bytes : amqp_cstring_bytes(tag), 0,
                                           autoAck ? 1 : 0, 0, amqp_empty_table)
                }
            }
            try check("basic.consume \(queue)")
        }

        private func check(_ what: String) throws {
            guard crabbitmqshim_last_rpc_ok(connection) == 0 else { throw BusError("\(what) refused by the broker") }
        }
    }

    private struct State {
        var outbox: [Operation] = []
        var connected = false
        var generation = 0
        var running = true
    }

    private let endpoints: AMQPEndpoints
    /// This link's broker user, set as `user_id` on what it publishes (the broker checks it).
    private let brokerUser: String
    private let name: String
    private let heartbeatSeconds: Int
    private let state = Locked(State())
    /// A pipe whose read end the I/O thread polls beside the socket, so a queued operation
    /// wakes it at once instead of after the poll's timeout.
    private let wakeRead: Int32
    private let wakeWrite: Int32
    private let setup: @Sendable (Channel) throws -> Void
    private let onDelivery: @Sendable (BusMessage) -> Void
    /// Entered while the I/O thread runs, so `stop` can join it.
    private let ioThread = DispatchGroup()

    public init(url: String, name: String, heartbeatSeconds: Int, setup: @escaping @Sendable (Channel) throws -> Void,
                onDelivery: @escaping @Sendable (BusMessage) -> Void) throws {
        self.endpoints = try AMQPEndpoints(url)
        brokerUser = endpoints.urls.first?.user ?? ""
        self.name = name
        self.heartbeatSeconds = heartbeatSeconds
        self.setup = setup
        self.onDelivery = onDelivery
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { throw BusError("pipe() failed: \(errno)") }
        for end in ends { _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK) }
        wakeRead = ends[0]
        wakeWrite = ends[1]
        ServiceMetrics.brokerConnected.set(0, name)
    }

    public var isConnected: Bool { state.withLock { $0.connected } }

    /// Whether a message delivered on connection `generation` can still be acked: that
    /// connection is the live one. Once it is gone, the broker has put the message back.
    public func isCurrent(generation: Int) -> Bool { state.withLock { $0.connected && $0.generation == generation } }

    /// Whether the link connected within `timeout` seconds (polled: only start-up waits on it).
    public func waitUntilConnected(timeout: Double) -> Bool {
        let deadline = DispatchTime.now() + timeout
        while !isConnected {
            if DispatchTime.now() >= deadline { return false }
            usleep(10_000)
        }
        return true
    }

    public func start() {
        ioThread.enter()
        let thread = Thread { [self] in
            self.runLoop()
            self.ioThread.leave()
        }
        thread.name = "amqp-\(name)"
        thread.start()
    }

    /// Performs what is already queued (the last replies and acks of a draining worker), closes
    /// the connection and joins the I/O thread, waiting at most `timeout` seconds for all of it.
    public func stop(timeout: Double = 5) {
        let finishing = state.withLock { state -> Bool in
            guard state.connected else {
                state.running = false
                return false
            }
            state.outbox.append(.finish)
            return true
        }
        wake()
        // The connection may drop before `.finish` is reached (its outbox is then discarded):
        // after a short wait, stop the loop directly so it does not reconnect.
        if finishing, ioThread.wait(timeout: .now() + min(2, timeout)) == .success { return }
        state.withLock { $0.running = false }
        wake()
        if ioThread.wait(timeout: .now() + timeout) == .timedOut {
            Log.warning("bus link did not stop in time; leaving it", ["link": name, "timeout_s": timeout])
        }
    }

    /// Queues an operation for the I/O thread. Returns false when the broker is not connected,
    /// so callers can fail fast (503) instead of waiting for a deadline.
    @discardableResult
    public func send(_ operation: Operation) -> Bool {
        let accepted = state.withLock { state -> Bool in
            guard state.connected else { return false }
            state.outbox.append(operation)
            return true
        }
        if accepted { wake() }
        return accepted
    }

    private func wake() {
        var one: UInt8 = 1
        _ = write(wakeWrite, &one, 1)
    }

    // MARK: - The I/O thread

    private func runLoop() {
        var delay = 0.1
        var unconfirmed = UnconfirmedPublishes()
        while state.withLock({ $0.running }) {
            guard let (connection, url) = connect() else {
                Thread.sleep(forTimeInterval: delay)
                delay = min(delay * 2, 5)
                continue
            }
            delay = 0.1
            // Before anything new: what the last connection's broker never confirmed.
            let resend = unconfirmed.takeForResend()
            var resendFailed = false
            for message in resend {
                guard publish(message, on: connection) else {
                    resendFailed = true
                    break
                }
                unconfirmed.published(message)
            }
            if !resend.isEmpty {
                Log.info("bus: published again what the lost connection had not confirmed",
                         ["link": name, "messages": resend.count])
            }
            if resendFailed {
                endpoints.moveOn()
                AMQPConnector.close(connection)
                continue
            }
            let generation = state.withLock { state -> Int in
                state.generation += 1
                state.connected = true
                state.outbox.removeAll()
                return state.generation
            }
            ServiceMetrics.brokerConnected.set(1, name)
            Log.info("bus connected", ["link": name, "host": url.host, "port": url.port,
                                       "heartbeat_seconds": amqp_get_heartbeat(connection)])
            serve(connection, generation: generation, unconfirmed: &unconfirmed)
            state.withLock {
                $0.connected = false
                $0.outbox.removeAll()
            }
            ServiceMetrics.brokerConnected.set(0, name)
            AMQPConnector.close(connection)
            if state.withLock({ $0.running }) {
                endpoints.moveOn()
                Log.warning("bus connection lost; reconnecting", ["link": name, "host": url.host, "port": url.port,
                                                                   "unconfirmed": unconfirmed.count])
            }
        }
    }

    private func connect() -> (amqp_connection_state_t, AMQPURL)? {
        guard let (connection, url) = endpoints.open(heartbeatSeconds: heartbeatSeconds, name: name) else { return nil }
        do {
            try setup(Channel(connection: connection))
            _ = amqp_confirm_select(connection, 1)
            guard crabbitmqshim_last_rpc_ok(connection) == 0 else { throw BusError("confirm.select refused") }
            _ = amqp_channel_open(connection, Self.replyChannel)
            guard crabbitmqshim_last_rpc_ok(connection) == 0 else { throw BusError("channel.open (replies) refused") }
        } catch {
            Log.error("bus setup failed", ["link": name, "host": url.host, "port": url.port,
                                           "error": String(describing: error)])
            AMQPConnector.close(connection)
            endpoints.moveOn()
            return nil
        }
        return (connection, url)
    }

    /// Publishes what others queued, then waits for the socket or a wake-up, until the
    /// connection fails or the link is stopped.
    private func serve(_ connection: amqp_connection_state_t, generation: Int, unconfirmed: inout UnconfirmedPublishes) {
        let socketFD = amqp_get_sockfd(connection)
        let wait = Int32(AMQPConnector.ioWaitMilliseconds(connection))
        var lastReceive = DispatchTime.now().uptimeNanoseconds
        while state.withLock({ $0.running }) {
            let work = state.withLock { state -> [Operation] in
                defer { state.outbox.removeAll(keepingCapacity: true) }
                return state.outbox
            }
            for operation in work {
                guard perform(operation, on: connection, generation: generation, unconfirmed: &unconfirmed) else { return }
            }
            if amqp_frames_enqueued(connection) == 0 && amqp_data_in_buffer(connection) == 0 {
                var fds = [pollfd(fd: socketFD, events: Int16(POLLIN), revents: 0),
                           pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)]
                let ready = poll(&fds, 2, wait)
                if ready < 0 && errno != EINTR { return }
                if fds[1].revents != 0 {
                    var drained = [UInt8](repeating: 0, count: 64)
                    while read(wakeRead, &drained, 64) > 0 {}
                }
                // Even with nothing readable, a zero-timeout consume lets rabbitmq-c send a due
                // heartbeat: after a poll timeout, and at least every `wait` ms however often
                // wake-ups come, that is its chance to.
                let sinceReceive = (DispatchTime.now().uptimeNanoseconds - lastReceive) / 1_000_000
                if fds[0].revents == 0 && ready != 0 && sinceReceive < UInt64(wait) { continue }
            }
            lastReceive = DispatchTime.now().uptimeNanoseconds
            guard receive(connection, generation: generation, unconfirmed: &unconfirmed) else { return }
        }
    }

    private func perform(_ operation: Operation, on connection: amqp_connection_state_t, generation: Int,
                         unconfirmed: inout UnconfirmedPublishes) -> Bool {
        switch operation {
        case .ack(let tag, let ackGeneration):
            guard ackGeneration == generation else { return true }
            return amqp_basic_ack(connection, 1, tag, 0) == 0
        case .requeue(let tag, let rejectGeneration):
            guard rejectGeneration == generation else { return true }
            return amqp_basic_reject(connection, 1, tag, 1) == 0
        case .deadLetter(let tag, let rejectGeneration):
            guard rejectGeneration == generation else { return true }
            return amqp_basic_reject(connection, 1, tag, 0) == 0
        case .cancel(let consumerTag):
            // Synchronous: deliveries that arrive before cancel-ok are queued by rabbitmq-c and
            // read by the loop as usual.
            _ = consumerTag.withCString { amqp_basic_cancel(connection, 1, amqp_cstring_bytes($0)) }
            return crabbitmqshim_last_rpc_ok(connection) == 0
        case .finish:
            state.withLock { $0.running = false }
            wake()  // so the loop ends now rather than after its next poll times out
            return true
        case .publish(let message):
            // Remembered even when the write fails: the next connection sends it again.
            if !Self.isReply(message) { unconfirmed.published(message) }
            return publish(message, on: connection)
        }
    }

    private func publish(_ message: OutgoingMessage, on connection: amqp_connection_state_t) -> Bool {
        let channel = Self.isReply(message) ? Self.replyChannel : 1
        let expiration = message.expirationMilliseconds.map { String(max($0, 1)) } ?? ""
        return message.type.withCString { type in
            message.correlationId.withCString { correlation in
                message.replyTo.withCString { replyTo in
                    message.messageId.withCString { messageId in
                        expiration.withCString { expirationC in
                            message.appId.withCString { appId in
                                message.requestId.withCString { requestId in
                                  message.callerToken.withCString { callerToken in
                                   message.languages.joined(separator: ",").withCString { languages in
                                   brokerUser.withCString { userId in
                                    var properties = crabbitmqshim_message(
                                        type: type, correlation_id: correlation, reply_to: replyTo,
                                        message_id: messageId, expiration: expirationC, app_id: appId,
                                        request_id: requestId, caller_token: callerToken, languages: languages,
                                        persistent: message.persistent ? 1 : 0, republished: message.republished ? 1 : 0,
                                        user_id: userId)
                                    return message.body.withUnsafeBytes { body in
                                        crabbitmqshim_publish(connection, channel, message.exchange, message.routingKey,
                                                              &properties, body.baseAddress, body.count) == 0
                                    }
                                   }
                                   }
                                  }
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    /// Reads what the socket has without blocking; false when the connection is gone.
    private func receive(_ connection: amqp_connection_state_t, generation: Int, unconfirmed: inout UnconfirmedPublishes) -> Bool {
        amqp_maybe_release_buffers(connection)
        var envelope = amqp_envelope_t()
        var zero = timeval(tv_sec: 0, tv_usec: 0)
        let reply = amqp_consume_message(connection, &envelope, &zero, 0)
        switch reply.reply_type {
        case AMQP_RESPONSE_NORMAL:
            defer { amqp_destroy_envelope(&envelope) }
            onDelivery(message(from: envelope, generation: generation))
            return true
        case AMQP_RESPONSE_LIBRARY_EXCEPTION where reply.library_error == AMQP_STATUS_TIMEOUT.rawValue:
            return true
        case AMQP_RESPONSE_LIBRARY_EXCEPTION where reply.library_error == AMQP_STATUS_UNEXPECTED_STATE.rawValue:
            // A frame other than a delivery (a channel or connection close, a basic.return):
            // read it; closes end this connection.
            var frame = amqp_frame_t()
            guard amqp_simple_wait_frame_noblock(connection, &frame, &zero) == 0 else { return false }
            if frame.channel == Self.replyChannel {
                return reopenReplyChannel(connection, frame)
            }
            var tag: UInt64 = 0
            var multiple: Int32 = 0
            let confirm = crabbitmqshim_confirm_frame(&frame, &tag, &multiple)
            if confirm != 0 {
                let nacked = unconfirmed.settle(tag: tag, multiple: multiple != 0, acked: confirm == 1)
                if !nacked.isEmpty {
                    // The broker could not take them (a quorum queue without a leader long
                    // enough): a command's caller gets its 503 at the deadline.
                    Log.warning("bus: the broker refused messages (nack)", ["link": name, "messages": nacked.count])
                }
                return true
            }
            if frame.frame_type == UInt8(AMQP_FRAME_METHOD) {
                let id = frame.payload.method.id
                if id == AMQP_CHANNEL_CLOSE_METHOD || id == AMQP_CONNECTION_CLOSE_METHOD { return false }
            }
            return true
        default:
            return false
        }
    }

    /// Replies to direct reply-to go out on a channel of their own, without confirms. A reply
    /// names one channel of one caller's connection; when that caller (or its node) is gone,
    /// RabbitMQ closes the publishing channel (406 "fast reply consumer does not exist"). On
    /// channel 1 that would end the worker's consumer and hand its commands back to be run again
    /// (and fail the same way, up to the delivery limit); here only the reply is lost, as its
    /// caller is. Not re-published after a lost connection either: the caller's deadline (503)
    /// and the command's redelivery cover it.
    static let replyChannel: amqp_channel_t = 3

    static func isReply(_ message: OutgoingMessage) -> Bool {
        message.exchange.isEmpty && message.routingKey.hasPrefix(BusTopology.directReplyTo + ".")
    }

    private func reopenReplyChannel(_ connection: amqp_connection_state_t, _ frame: amqp_frame_t) -> Bool {
        guard frame.frame_type == UInt8(AMQP_FRAME_METHOD), frame.payload.method.id == AMQP_CHANNEL_CLOSE_METHOD else { return true }
        var closeOk = amqp_channel_close_ok_t()
        guard amqp_send_method(connection, Self.replyChannel, AMQP_CHANNEL_CLOSE_OK_METHOD, &closeOk) == 0 else { return false }
        Log.info("bus: a reply's caller is gone; reply dropped", ["link": name])
        _ = amqp_channel_open(connection, Self.replyChannel)
        return crabbitmqshim_last_rpc_ok(connection) == 0
    }

    private func message(from envelope: amqp_envelope_t, generation: Int) -> BusMessage {
        var message = Self.busMessage(properties: envelope.message.properties, body: envelope.message.body,
                                      deliveryTag: envelope.delivery_tag, redelivered: envelope.redelivered != 0,
                                      generation: generation, republishers: RepublishTrust.publishers(ownUser: brokerUser))
        if let pointer = envelope.routing_key.bytes, envelope.routing_key.len > 0 {
            message.routingKey = String(decoding: UnsafeRawBufferPointer(start: pointer, count: envelope.routing_key.len), as: UTF8.self)
        }
        return message
    }

    /// A received message's properties and body as a `BusMessage` (copied out of rabbitmq-c's buffers).
    static func busMessage(properties: amqp_basic_properties_t, body: amqp_bytes_t, deliveryTag: UInt64,
                           redelivered: Bool, generation: Int, republishers: Set<String> = []) -> BusMessage {
        var properties = properties
        func text(_ bytes: amqp_bytes_t, _ flag: Int32) -> String {
            guard properties._flags & amqp_flags_t(flag) != 0, let pointer = bytes.bytes, bytes.len > 0 else { return "" }
            return String(decoding: UnsafeRawBufferPointer(start: pointer, count: bytes.len), as: UTF8.self)
        }
        func header(_ name: String, capacity: Int = 256) -> String {
            var buffer = [CChar](repeating: 0, count: capacity)
            let length = crabbitmqshim_header(&properties, name, &buffer, buffer.count)
            guard length >= 0 else { return "" }
            return String(decoding: buffer.prefix(Int(length)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
        return BusMessage(
            type: text(properties.type, AMQP_BASIC_TYPE_FLAG),
            body: body.bytes.map { Data(bytes: $0, count: body.len) } ?? Data(),
            correlationId: text(properties.correlation_id, AMQP_BASIC_CORRELATION_ID_FLAG),
            replyTo: text(properties.reply_to, AMQP_BASIC_REPLY_TO_FLAG),
            messageId: text(properties.message_id, AMQP_BASIC_MESSAGE_ID_FLAG),
            appId: header("app_id"),
            requestId: header("request_id"),
            // Access tokens are under 8 KiB (the gateway refuses longer ones).
            callerToken: header("caller_token", capacity: 8192),
            // Checked again: only a gateway publishes commands, but a tag is cheap to check.
            languages: header("languages").split(separator: ",").prefix(6).compactMap { LanguageTag.normalized(String($0)) },
            deliveryTag: deliveryTag,
            linkGeneration: generation,
            // A message published again after a lost connection may have been taken already, but
            // only a publisher we trust may say so (RepublishTrust): the broker's own flag, or
            // the header from a broker user the broker vouched for as `user_id`.
            redelivered: redelivered || (header("republished") == "1"
                                         && republishers.contains(text(properties.user_id, AMQP_BASIC_USER_ID_FLAG))),
            deliveryCount: max(0, Int(crabbitmqshim_header_int(&properties, "x-delivery-count"))),
            publisher: text(properties.user_id, AMQP_BASIC_USER_ID_FLAG),
            expirationMilliseconds: Int(text(properties.expiration, AMQP_BASIC_EXPIRATION_FLAG)))
    }
}
