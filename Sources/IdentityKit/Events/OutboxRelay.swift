import CRabbitMQ
import CRabbitMQShim
import Foundation

/// Publishes the outbox (events, and commands that must follow a commit) with publisher confirms, oldest first: a batch
/// is locked (`FOR UPDATE SKIP LOCKED`, so several relays can run), published, and deleted in
/// the same transaction only once the broker has confirmed every message. A broker outage or a
/// crash leaves the rows for the next try, so an event may go out twice (consumers drop
/// duplicates by `event_id`) but is never lost. It owns its own AMQP connection on its own
/// thread, like every rabbitmq-c handle here.
public final class OutboxRelay: Sendable {
    /// Entered while the relay's thread runs, so `stop` can join it.
    private let relayThread = DispatchGroup()
    private let url: AMQPURL
    private let pool: PGPool
    private let batchSize: Int
    private let running = Locked(true)

    public init(url: String, pool: PGPool, batchSize: Int = 200) throws {
        self.url = try AMQPURL(url)
        self.pool = pool
        self.batchSize = batchSize
    }

    public func start() {
        relayThread.enter()
        let thread = Thread { [self] in
            self.run()
            self.relayThread.leave()
        }
        thread.name = "outbox-relay"
        thread.start()
    }

    /// Lets the batch in hand finish (published, confirmed, deleted) and joins the thread,
    /// waiting at most `timeout` seconds; rows not yet relayed stay for the next relay.
    public func stop(timeout: Double = 10) {
        running.withLock { $0 = false }
        if relayThread.wait(timeout: .now() + timeout) == .timedOut {
            Log.warning("outbox relay did not stop in time; leaving it", ["timeout_s": String(timeout)])
        }
    }

    private var isRunning: Bool { running.withLock { $0 } }

    private func run() {
        var delay = 0.1
        var failureDelay = 0.1
        while isRunning {
            guard let connection = openConfirmingChannel() else {
                Thread.sleep(forTimeInterval: delay)
                delay = min(delay * 2, 5)
                continue
            }
            delay = 0.1
            Log.info("outbox relay connected", ["host": url.host, "port": String(url.port)])
            var publisher = ConfirmingPublisher(connection: connection)
            var failed = false
            while isRunning {
                do {
                    if try relayBatch(&publisher) == 0 { Thread.sleep(forTimeInterval: 0.1) }
                    failureDelay = 0.1
                } catch {
                    Log.warning("outbox relay interrupted; will retry", ["error": String(describing: error)])
                    failed = true
                    break
                }
            }
            AMQPConnector.close(connection)
            // The store or the broker failed mid-batch: wait before trying again, longer each
            // time, rather than spinning while the database restarts.
            if failed {
                Thread.sleep(forTimeInterval: failureDelay)
                failureDelay = min(failureDelay * 2, 5)
            }
        }
    }

    private func openConfirmingChannel() -> amqp_connection_state_t? {
        guard let connection = AMQPConnector.open(url) else { return nil }
        EventOutbox.exchange.withCString { exchange in
            "topic".withCString { type in
                _ = amqp_exchange_declare(connection, 1, amqp_cstring_bytes(exchange), amqp_cstring_bytes(type),
                                          0, 1, 0, 0, amqp_empty_table)
            }
        }
        guard crabbitmqshim_last_rpc_ok(connection) == 0 else {
            AMQPConnector.close(connection)
            return nil
        }
        _ = amqp_confirm_select(connection, 1)
        guard crabbitmqshim_last_rpc_ok(connection) == 0 else {
            AMQPConnector.close(connection)
            return nil
        }
        return connection
    }

    /// Publishes one batch; returns how many events went out.
    private func relayBatch(_ publisher: inout ConfirmingPublisher) throws -> Int {
        try pool.transaction { connection in
            let rows = try connection.query("""
                SELECT id, app_id, event_id, exchange, routing_key, message_type, payload FROM outbox
                ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED
                """, [String(batchSize)])
            guard !rows.isEmpty else { return 0 }
            for row in rows {
                var message = try OutgoingMessage(exchange: row.string("exchange"), routingKey: row.string("routing_key"),
                                              type: row.string("message_type"), body: Data(row.string("payload").utf8))
                message.messageId = try row.string("event_id")
                message.appId = try row.string("app_id")
                message.persistent = true
                try publisher.publish(message)
            }
            try publisher.awaitConfirms()
            try connection.query("DELETE FROM outbox WHERE id = ANY($1::bigint[])",
                                 ["{" + rows.map { try $0.string("id") }.joined(separator: ",") + "}"])
            return rows.count
        }
    }
}

/// Publishes on a channel in confirm mode and waits until the broker has confirmed all of it.
struct ConfirmingPublisher {
    let connection: amqp_connection_state_t
    /// Delivery tags count publishes on the channel from 1.
    private var published: UInt64 = 0
    private var confirmed: UInt64 = 0

    init(connection: amqp_connection_state_t) { self.connection = connection }

    mutating func publish(_ message: OutgoingMessage) throws {
        let status = message.type.withCString { type in
            message.messageId.withCString { messageId in
                message.appId.withCString { appId in
                    var properties = crabbitmqshim_message(type: type, correlation_id: nil, reply_to: nil,
                                                           message_id: messageId, expiration: nil, app_id: appId,
                                                           request_id: nil, persistent: message.persistent ? 1 : 0)
                    return message.body.withUnsafeBytes { body in
                        crabbitmqshim_publish(connection, 1, message.exchange, message.routingKey, &properties,
                                              body.baseAddress, body.count)
                    }
                }
            }
        }
        guard status == 0 else { throw BusError("publish failed (\(status))") }
        published += 1
    }

    /// Reads frames until every publish so far is acked; a nack or a silent broker is an error.
    mutating func awaitConfirms(timeoutSeconds: Int = 5) throws {
        let deadline = Date().addingTimeInterval(TimeInterval(timeoutSeconds))
        while confirmed < published {
            guard Date() < deadline else { throw BusError("no publisher confirm within \(timeoutSeconds) s") }
            var frame = amqp_frame_t()
            var timeout = timeval(tv_sec: 1, tv_usec: 0)
            let status = amqp_simple_wait_frame_noblock(connection, &frame, &timeout)
            if status == AMQP_STATUS_TIMEOUT.rawValue { continue }
            guard status == 0 else { throw BusError("connection lost while waiting for confirms (\(status))") }
            guard frame.frame_type == UInt8(AMQP_FRAME_METHOD) else { continue }
            switch frame.payload.method.id {
            case AMQP_BASIC_ACK_METHOD:
                let ack = frame.payload.method.decoded.assumingMemoryBound(to: amqp_basic_ack_t.self).pointee
                confirmed = ack.multiple != 0 ? max(confirmed, ack.delivery_tag) : max(confirmed, ack.delivery_tag)
            case AMQP_BASIC_NACK_METHOD:
                throw BusError("the broker refused an event (nack)")
            case AMQP_CHANNEL_CLOSE_METHOD, AMQP_CONNECTION_CLOSE_METHOD:
                throw BusError("the broker closed the channel")
            default:
                continue
            }
        }
    }
}
