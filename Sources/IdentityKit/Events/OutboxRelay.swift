import CRabbitMQ
import CRabbitMQShim
import Foundation

/// Publishes the outbox (events, and commands that must follow a commit) with publisher confirms, oldest first: a batch
/// is locked (`FOR UPDATE SKIP LOCKED`, so several relays can run), published, and in the same
/// transaction exactly the rows the broker acked are deleted. A nacked row stays for a later
/// batch (held back with a growing delay, `RefusedOutboxRows`); a broker outage or a crash
/// leaves every unconfirmed row for the next try, so an event may go out twice (consumers drop
/// duplicates by `event_id`) but is never lost. It owns its own AMQP connection on its own
/// thread, like every rabbitmq-c handle here, and waits between polls inside rabbitmq-c so the
/// connection's heartbeats keep going while the outbox is empty.
public final class OutboxRelay: Sendable {
    /// Entered while the relay's thread runs, so `stop` can join it.
    private let relayThread = DispatchGroup()
    private let endpoints: AMQPEndpoints
    private let heartbeatSeconds: Int
    private let pool: PGPool
    private let batchSize: Int
    private let running = Locked(true)
    /// How long to wait between polls of an empty outbox.
    private let pollMilliseconds = 100

    public init(url: String, heartbeatSeconds: Int, pool: PGPool, batchSize: Int = 200) throws {
        self.endpoints = try AMQPEndpoints(url)
        self.heartbeatSeconds = heartbeatSeconds
        self.pool = pool
        self.batchSize = batchSize
        ServiceMetrics.brokerConnected.set(0, "outbox-relay")
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
            Log.warning("outbox relay did not stop in time; leaving it", ["timeout_s": timeout])
        }
    }

    private var isRunning: Bool { running.withLock { $0 } }

    private func run() {
        var delay = 0.1
        var failureDelay = 0.1
        var refused = RefusedOutboxRows()
        while isRunning {
            guard let (connection, url) = openConfirmingChannel() else {
                Thread.sleep(forTimeInterval: delay)
                delay = min(delay * 2, 5)
                continue
            }
            delay = 0.1
            ServiceMetrics.brokerConnected.set(1, "outbox-relay")
            Log.info("outbox relay connected", ["host": url.host, "port": url.port,
                                                "heartbeat_seconds": amqp_get_heartbeat(connection)])
            var publisher = ConfirmingPublisher<String>(connection: connection, brokerUser: url.user)
            var failed = false
            while isRunning {
                do {
                    if try relayBatch(&publisher, &refused) == 0 { try publisher.idle(milliseconds: pollMilliseconds) }
                    failureDelay = 0.1
                } catch {
                    Log.warning("outbox relay interrupted; will retry", ["error": String(describing: error)])
                    failed = true
                    break
                }
            }
            ServiceMetrics.brokerConnected.set(0, "outbox-relay")
            AMQPConnector.close(connection)
            // Rows the lost connection did not get confirmed stay in the outbox: the next
            // batch, on the next node first, publishes them again.
            if failed { endpoints.moveOn() }
            // The store or the broker failed mid-batch: wait before trying again, longer each
            // time, rather than spinning while the database restarts.
            if failed {
                Thread.sleep(forTimeInterval: failureDelay)
                failureDelay = min(failureDelay * 2, 5)
            }
        }
    }

    private func openConfirmingChannel() -> (amqp_connection_state_t, AMQPURL)? {
        guard let (connection, url) = endpoints.open(heartbeatSeconds: heartbeatSeconds, name: "outbox-relay") else {
            return nil
        }
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
        return (connection, url)
    }

    /// Publishes one batch; returns how many rows the broker took (and were deleted).
    private func relayBatch(_ publisher: inout ConfirmingPublisher<String>, _ refused: inout RefusedOutboxRows) throws -> Int {
        let now = Double(DispatchTime.now().uptimeNanoseconds) / 1e9
        refused.forgetStale(now: now)
        let heldBack = Self.idArray(refused.heldBack(now: now))
        var eventIds: [String: String] = [:]
        var ages: [String: Double] = [:]
        let (acked, nacked) = try pool.transaction { connection -> (acked: [String], nacked: [String]) in
            let rows = try connection.query("""
                SELECT id, app_id, event_id, exchange, routing_key, message_type, payload,
                       extract(epoch FROM clock_timestamp() - created_at)::float8 AS age FROM outbox
                WHERE NOT (id = ANY($2::bigint[]))
                ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED
                """, [String(batchSize), heldBack])
            guard !rows.isEmpty else { return ([], []) }
            for row in rows {
                var message = try OutgoingMessage(exchange: row.string("exchange"), routingKey: row.string("routing_key"),
                                              type: row.string("message_type"), body: Data(row.string("payload").utf8))
                message.messageId = try row.string("event_id")
                message.appId = try row.string("app_id")
                message.persistent = true
                let id = try row.string("id")
                eventIds[id] = message.messageId
                ages[id] = (try? row.double("age")) ?? 0
                try publisher.publish(message, id: id)
            }
            // Exactly the rows the broker acked go; nacked ones stay for a later batch.
            let outcome = try publisher.awaitConfirms()
            if !outcome.acked.isEmpty {
                try connection.query("DELETE FROM outbox WHERE id = ANY($1::bigint[])", [Self.idArray(outcome.acked)])
            }
            return outcome
        }
        refused.delivered(acked)
        let confirmedAfter = Double(DispatchTime.now().uptimeNanoseconds) / 1e9 - now
        ServiceMetrics.outboxRelayed.inc(by: Double(acked.count))
        for id in acked { ServiceMetrics.outboxRelayLag.observe((ages[id] ?? 0) + confirmedAfter) }
        if !acked.isEmpty {
            Log.debug("outbox batch relayed", ["acked": acked.count,
                                               "event_ids": acked.prefix(20).compactMap { eventIds[$0] }.joined(separator: ",")])
        }
        if !nacked.isEmpty {
            let delay = refused.refused(nacked, now: now)
            Log.warning("the broker refused outbox messages (nack); they stay in the outbox",
                        ["refused": nacked.count, "acked": acked.count,
                         "retry_in_ms": Int(delay * 1000)])
        }
        return acked.count
    }

    /// Reads the outbox's backlog and the age of its oldest row each time metrics are rendered
    /// (a scrape), through `pool` (a role that may read the outbox: the relay's).
    public static func reportBacklog(pool: PGPool) {
        Metrics.shared.onCollect {
            guard let row = try? pool.withConnection({ try $0.query("""
                SELECT count(*)::bigint AS backlog,
                       coalesce(extract(epoch FROM now() - min(created_at)), 0)::float8 AS oldest FROM outbox
                """).first }) else { return }
            ServiceMetrics.outboxBacklog.set(Double((try? row.int("backlog")) ?? 0))
            ServiceMetrics.outboxOldestAge.set((try? row.double("oldest")) ?? 0)
        }
    }

    /// A PostgreSQL array literal of row ids (digits only: they come from a bigint column).
    private static func idArray(_ ids: [String]) -> String {
        "{" + ids.joined(separator: ",") + "}"
    }
}
