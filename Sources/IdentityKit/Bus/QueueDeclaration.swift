import CRabbitMQ
import CRabbitMQShim
import Foundation

/// The one place durable queues are declared (`AMQPLink.Channel.declareQueue` and
/// `declareDelayQueue` come here), so every queue of every process — command, retry, delay and
/// dead-letter queues, and any a later change adds through those calls — gets the same type.
///
/// Quorum queues (the default, `IDENTITY_AMQP_QUEUE_TYPE=quorum`) are replicated over the
/// cluster's nodes and survive the loss of a minority of them; `classic` keeps RabbitMQ's
/// single-node queues for a dev machine. Delivery limits and dead-lettering of command queues
/// are broker policies (scripts/broker-users.sh), not declare arguments, so every process that
/// declares a command queue (the gateway too, which may not read them) declares it alike.
///
/// A queue cannot change type in place. When the broker refuses a declare because the queue
/// exists with other arguments (406), the queue is deleted only if it is empty and has no
/// consumer, and declared again; otherwise it is used as it is (a warning says so) and the
/// switch is tried again at the next connect. So an existing `.run/` starts, and its queues
/// turn quorum once drained.
public enum QueueDeclaration {
    public enum QueueType: String, Sendable {
        case quorum, classic
    }

    private static let configuredType = Locked(QueueType.quorum)

    /// Set once at start (`CommonConfiguration.applyToProcess`).
    public static func setType(_ type: QueueType) { configuredType.withLock { $0 = type } }
    public static var type: QueueType { configuredType.withLock { $0 } }

    /// Declarations use their own channel: a refused declare closes the channel it was made on,
    /// and channel 1 (publishing, consuming, its qos and confirm mode) must stay as it is.
    private static let declareChannel: amqp_channel_t = 2

    static func declare(_ connection: amqp_connection_state_t, _ name: String, durable: Bool,
                        deadLetterExchange: String? = nil, deadLetterRoutingKey: String = "") throws {
        // Quorum queues are durable by nature; a scratch queue (bench) stays classic.
        let quorum = durable && type == .quorum
        try withChannel(connection) {
            let first = attempt(connection, name, durable: durable, quorum: quorum, passive: false,
                                deadLetterExchange, deadLetterRoutingKey)
            if first == 0 { return }
            guard first == 406 else { throw BusError("queue.declare \(name) refused by the broker (\(first))") }
            // It exists with other arguments (its type, most likely): replace it only when nothing is lost.
            try reopen(connection)
            let deleted = name.withCString { crabbitmqshim_delete_queue_if_idle(connection, declareChannel, $0) }
            if deleted == 0 {
                let again = attempt(connection, name, durable: durable, quorum: quorum, passive: false,
                                    deadLetterExchange, deadLetterRoutingKey)
                guard again == 0 else { throw BusError("queue.declare \(name) refused after replacing it (\(again))") }
                Log.info("queue declared anew with its new type", ["queue": name, "type": quorum ? "quorum" : "classic"])
                return
            }
            try reopen(connection)
            let exists = attempt(connection, name, durable: durable, quorum: false, passive: true, nil, "")
            guard exists == 0 else { throw BusError("queue \(name) can be neither declared nor used (\(exists))") }
            Log.warning("queue keeps its earlier type until it is empty and unused; using it as it is",
                        ["queue": name, "wanted_type": quorum ? "quorum" : "classic"])
        }
    }

    private static func attempt(_ connection: amqp_connection_state_t, _ name: String, durable: Bool, quorum: Bool,
                                passive: Bool, _ deadLetterExchange: String?, _ deadLetterRoutingKey: String) -> Int32 {
        name.withCString { queue in
            (deadLetterExchange ?? "").withCString { exchange in
                deadLetterRoutingKey.withCString { routingKey in
                    var options = crabbitmqshim_queue_options(
                        quorum: quorum ? 1 : 0, passive: passive ? 1 : 0,
                        dead_letter_exchange: deadLetterExchange == nil ? nil : exchange,
                        dead_letter_routing_key: routingKey)
                    return crabbitmqshim_declare_queue(connection, declareChannel, queue, durable ? 1 : 0, &options)
                }
            }
        }
    }

    private static func withChannel(_ connection: amqp_connection_state_t, _ body: () throws -> Void) throws {
        _ = amqp_channel_open(connection, declareChannel)
        guard crabbitmqshim_last_rpc_ok(connection) == 0 else { throw BusError("channel.open refused") }
        try body()
        _ = amqp_channel_close(connection, declareChannel, AMQP_REPLY_SUCCESS)
    }

    /// Opens the declare channel again after the broker closed it.
    private static func reopen(_ connection: amqp_connection_state_t) throws {
        _ = amqp_channel_open(connection, declareChannel)
        guard crabbitmqshim_last_rpc_ok(connection) == 0 else { throw BusError("channel.open refused") }
    }
}
