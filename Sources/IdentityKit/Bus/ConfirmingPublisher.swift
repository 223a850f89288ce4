import CRabbitMQ
import CRabbitMQShim
import Foundation

/// Publishes on channel 1 of a connection in confirm mode and collects the broker's answers by
/// delivery tag (`ConfirmTracker`), so a caller learns exactly which messages were acked and
/// which nacked. Owned by the one thread that owns the connection.
struct ConfirmingPublisher<ID: Hashable> {
    let connection: amqp_connection_state_t
    /// The connection's broker user, set as `user_id` on every message (RabbitMQ refuses a
    /// `user_id` that is not the connection's login), so a receiver can tell who published it.
    let brokerUser: String
    /// Delivery tags count publishes on the channel from 1.
    private var lastTag: UInt64 = 0
    private var tracker = ConfirmTracker<ID>()

    init(connection: amqp_connection_state_t, brokerUser: String) {
        self.connection = connection
        self.brokerUser = brokerUser
    }

    /// Publishes `message`, remembered as `id` until the broker answers for it.
    mutating func publish(_ message: OutgoingMessage, id: ID) throws {
        let status = message.type.withCString { type in
            message.messageId.withCString { messageId in
                message.appId.withCString { appId in
                  brokerUser.withCString { userId in
                    var properties = crabbitmqshim_message(type: type, correlation_id: nil, reply_to: nil,
                                                           message_id: messageId, expiration: nil, app_id: appId,
                                                           request_id: nil, caller_token: nil, languages: nil,
                                                           persistent: message.persistent ? 1 : 0, republished: 0,
                                                           user_id: brokerUser.isEmpty ? nil : userId)
                    return message.body.withUnsafeBytes { body in
                        crabbitmqshim_publish(connection, 1, message.exchange, message.routingKey, &properties,
                                              body.baseAddress, body.count)
                    }
                  }
                }
            }
        }
        guard status == 0 else { throw BusError("publish failed (\(status))") }
        lastTag += 1
        tracker.published(tag: lastTag, id: id)
    }

    /// Reads frames until the broker has answered every publish so far, and returns which were
    /// acked and which nacked. A silent broker or a closed channel is an error: the caller then
    /// drops the connection, and whatever was not acked counts as not delivered.
    mutating func awaitConfirms(timeoutSeconds: Int = 5) throws -> (acked: [ID], nacked: [ID]) {
        let deadline = Date().addingTimeInterval(TimeInterval(timeoutSeconds))
        while tracker.pendingCount > 0 {
            guard Date() < deadline else { throw BusError("no publisher confirm within \(timeoutSeconds) s") }
            if let frame = try nextFrame(timeoutMilliseconds: 1000) { try handle(frame) }
        }
        return tracker.takeSettled()
    }

    /// Waits `milliseconds` with nothing to publish, reading what the broker sends. Calling into
    /// rabbitmq-c is what sends a due heartbeat on an idle connection, and a broker's close or a
    /// heartbeat timeout surfaces here as an error rather than at the next publish.
    mutating func idle(milliseconds: Int) throws {
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(max(milliseconds, 0)) * 1_000_000
        while true {
            let now = DispatchTime.now().uptimeNanoseconds
            guard now < deadline else { return }
            guard let frame = try nextFrame(timeoutMilliseconds: Int((deadline - now) / 1_000_000)) else { return }
            try handle(frame)
        }
    }

    /// The next frame other than a heartbeat (rabbitmq-c answers those itself), or nil when
    /// none came in time.
    private func nextFrame(timeoutMilliseconds: Int) throws -> amqp_frame_t? {
        var frame = amqp_frame_t()
        var timeout = timeval(tv_sec: timeoutMilliseconds / 1000, tv_usec: Int((timeoutMilliseconds % 1000) * 1000))
        let status = amqp_simple_wait_frame_noblock(connection, &frame, &timeout)
        if status == AMQP_STATUS_TIMEOUT.rawValue { return nil }
        guard status == 0 else { throw BusError("connection lost (\(status))") }
        return frame
    }

    private mutating func handle(_ frame: amqp_frame_t) throws {
        guard frame.frame_type == UInt8(AMQP_FRAME_METHOD) else { return }
        switch frame.payload.method.id {
        case AMQP_BASIC_ACK_METHOD:
            let ack = frame.payload.method.decoded.assumingMemoryBound(to: amqp_basic_ack_t.self).pointee
            tracker.settle(tag: ack.delivery_tag, multiple: ack.multiple != 0, acked: true)
        case AMQP_BASIC_NACK_METHOD:
            let nack = frame.payload.method.decoded.assumingMemoryBound(to: amqp_basic_nack_t.self).pointee
            tracker.settle(tag: nack.delivery_tag, multiple: nack.multiple != 0, acked: false)
        case AMQP_CHANNEL_CLOSE_METHOD, AMQP_CONNECTION_CLOSE_METHOD:
            throw BusError("the broker closed the channel")
        default:
            return
        }
    }
}
