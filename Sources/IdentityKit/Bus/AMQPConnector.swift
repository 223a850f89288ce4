import CRabbitMQ
import CRabbitMQShim
import Foundation

/// Opens an AMQP connection with channel 1 ready, or nil when the broker cannot be reached or
/// refuses the login; callers retry with their own backoff.
enum AMQPConnector {
    static func open(_ url: AMQPURL, heartbeatSeconds: Int32 = 30) -> amqp_connection_state_t? {
        guard let connection = amqp_new_connection() else { return nil }
        guard let socket = amqp_tcp_socket_new(connection) else {
            amqp_destroy_connection(connection)
            return nil
        }
        var timeout = timeval(tv_sec: 2, tv_usec: 0)
        guard amqp_socket_open_noblock(socket, url.host, url.port, &timeout) == 0,
              crabbitmqshim_login(connection, url.vhost, heartbeatSeconds, url.user, url.password) == 0
        else {
            amqp_destroy_connection(connection)
            return nil
        }
        _ = amqp_channel_open(connection, 1)
        guard crabbitmqshim_last_rpc_ok(connection) == 0 else {
            close(connection)
            return nil
        }
        return connection
    }

    static func close(_ connection: amqp_connection_state_t) {
        amqp_connection_close(connection, AMQP_REPLY_SUCCESS)
        amqp_destroy_connection(connection)
    }
}
