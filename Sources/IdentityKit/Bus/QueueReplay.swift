import CRabbitMQ
import CRabbitMQShim
import Foundation

/// Moves every message waiting in one queue to another, for operators replaying dead letters
/// (`identityctl mail replay-dead`). Each message is republished (persistent, its type and
/// id kept, the body passed through `transform`) before it is acked, so a crash midway can
/// duplicate a message but never lose one.
public enum QueueReplay {
    public static func move(url: String, heartbeatSeconds: Int, from source: String, to target: String,
                            transform: (BusMessage) -> Data) throws -> Int {
        guard let (connection, endpoint) = try AMQPEndpoints(url).open(heartbeatSeconds: heartbeatSeconds, name: "replay") else {
            throw BusError("cannot reach the broker")
        }
        defer { AMQPConnector.close(connection) }
        _ = amqp_confirm_select(connection, 1)
        guard crabbitmqshim_last_rpc_ok(connection) == 0 else { throw BusError("confirm.select refused") }
        var publisher = ConfirmingPublisher<Int>(connection: connection, brokerUser: endpoint.user)
        var moved = 0
        while true {
            let reply = source.withCString { amqp_basic_get(connection, 1, amqp_cstring_bytes($0), 0) }
            guard reply.reply_type == AMQP_RESPONSE_NORMAL else { throw BusError("basic.get on \(source) failed") }
            // basic.get-empty: nothing left.
            guard reply.reply.id == AMQP_BASIC_GET_OK_METHOD else { break }
            let tag = reply.reply.decoded.assumingMemoryBound(to: amqp_basic_get_ok_t.self).pointee.delivery_tag
            var message = amqp_message_t()
            guard amqp_read_message(connection, 1, &message, 0).reply_type == AMQP_RESPONSE_NORMAL else {
                throw BusError("reading a message from \(source) failed")
            }
            let received = AMQPLink.busMessage(properties: message.properties, body: message.body, deliveryTag: tag,
                                               redelivered: false, generation: 0)
            amqp_destroy_message(&message)
            var outgoing = OutgoingMessage(exchange: "", routingKey: target, type: received.type, body: transform(received))
            outgoing.messageId = received.messageId
            outgoing.appId = received.appId
            outgoing.persistent = true
            try publisher.publish(outgoing, id: moved)
            guard try publisher.awaitConfirms().nacked.isEmpty else {
                throw BusError("the broker refused a message moved to \(target) (nack); it stays in \(source)")
            }
            guard amqp_basic_ack(connection, 1, tag, 0) == 0 else { throw BusError("ack failed") }
            moved += 1
        }
        return moved
    }
}
