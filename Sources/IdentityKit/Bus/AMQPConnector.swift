import CRabbitMQ
import CRabbitMQShim
import Foundation

/// Opens an AMQP connection with channel 1 ready, or nil when the broker cannot be reached or
/// refuses the login; callers retry with their own backoff.
///
/// Every connection negotiates heartbeats (`IDENTITY_AMQP_HEARTBEAT_SECONDS`): without them a
/// connection that stays idle behind a NAT, a load balancer or the broker's own checks is cut
/// silently and the next publish fails. rabbitmq-c sends a heartbeat only from inside a call
/// into it (a publish or a frame wait), so every owner of a connection calls in at least every
/// `ioWaitMilliseconds` while idle.
enum AMQPConnector {
    /// `name` says which part of the process owns the connection (`outbox-relay`,
    /// `revocation-worker`…): the broker shows it, with the program and its pid, as the
    /// connection's `connection_name`.
    static func open(_ url: AMQPURL, heartbeatSeconds: Int, name: String) -> amqp_connection_state_t? {
        guard let connection = amqp_new_connection() else { return nil }
        guard let socket = amqp_tcp_socket_new(connection) else {
            amqp_destroy_connection(connection)
            return nil
        }
        var timeout = timeval(tv_sec: 2, tv_usec: 0)
        // A broker that takes the connection and then says nothing (one stuck deleting a vhost,
        // a half-dead node) must not hold us: the login and every RPC (channel open, queue
        // declarations, confirm.select) give up after these, close, and the caller retries,
        // the next node first. rabbitmq-c waits 12 s for a login and forever for an RPC.
        var handshake = timeval(tv_sec: Self.handshakeSeconds, tv_usec: 0)
        var rpc = timeval(tv_sec: Self.rpcSeconds, tv_usec: 0)
        amqp_set_handshake_timeout(connection, &handshake)
        amqp_set_rpc_timeout(connection, &rpc)
        guard amqp_socket_open_noblock(socket, url.host, url.port, &timeout) == 0,
              crabbitmqshim_login(connection, url.vhost, Int32(clamping: heartbeatSeconds), url.user, url.password,
                                  connectionName(name)) == 0
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

    /// Seconds a login may take (the broker's own limit is 10).
    static let handshakeSeconds = 5
    /// Seconds an RPC may take: a quorum queue's declaration waits for its election.
    static let rpcSeconds = 10

    static func close(_ connection: amqp_connection_state_t) {
        amqp_connection_close(connection, AMQP_REPLY_SUCCESS)
        amqp_destroy_connection(connection)
    }

    /// The longest an idle I/O loop may go without calling into rabbitmq-c: a quarter of the
    /// heartbeat interval the broker agreed to (it may lower ours), at most a second. The
    /// broker gives up after two silent intervals, so a heartbeat sent a quarter late is safe.
    static func ioWaitMilliseconds(_ connection: amqp_connection_state_t) -> Int {
        let heartbeat = Int(amqp_get_heartbeat(connection))
        guard heartbeat > 0 else { return 1000 }
        return max(50, min(1000, heartbeat * 250))
    }

    static func connectionName(_ name: String) -> String {
        "\(ProcessInfo.processInfo.processName) \(name) (pid \(getpid()))"
    }
}
