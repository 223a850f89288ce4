import CRabbitMQ

/// The parts of one `amqp://user:password@host:port/vhost` URL, parsed by rabbitmq-c (a list of
/// them, one per node of a cluster: `AMQPEndpoints`).
struct AMQPURL: Sendable {
    var host: String
    var port: Int32
    var user: String
    var password: String
    var vhost: String

    init(_ url: String) throws {
        // amqp_parse_url points into the buffer it parses, so read every part inside the closure.
        var buffer = Array(url.utf8CString)
        let parts: [String]? = buffer.withUnsafeMutableBufferPointer { pointer in
            var info = amqp_connection_info()
            guard amqp_parse_url(pointer.baseAddress, &info) == 0 else { return nil }
            return [info.host.map { String(cString: $0) } ?? "127.0.0.1", String(info.port),
                    info.user.map { String(cString: $0) } ?? "guest",
                    info.password.map { String(cString: $0) } ?? "guest",
                    info.vhost.map { String(cString: $0) } ?? "/"]
        }
        guard let parts else { throw BusError("invalid AMQP URL in IDENTITY_AMQP_URL") }
        host = parts[0]
        port = Int32(parts[1]) ?? 5672
        user = parts[2]
        password = parts[3]
        vhost = parts[4].isEmpty ? "/" : parts[4]
    }
}
