import CRabbitMQ
import Foundation

/// The broker nodes a process may use: `IDENTITY_AMQP_URL` holds one URL, or several separated
/// by commas (the nodes of one RabbitMQ cluster, same user and vhost). A connection goes to the
/// first node that answers, starting from a node chosen per process (so the processes of one
/// machine spread over the cluster); after a connection is lost the next attempt starts with the
/// following node, so a stopped node costs one refused connect, not a wait for it to come back.
public final class AMQPEndpoints: Sendable {
    let urls: [AMQPURL]
    private let next: Locked<Int>

    public init(_ text: String) throws {
        let parts = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        guard !parts.isEmpty else { throw BusError("IDENTITY_AMQP_URL is empty") }
        urls = try parts.map { try AMQPURL($0) }
        next = Locked(Int(getpid()) % parts.count)
    }

    /// The broker user this process logs in as (the same on every node).
    public var user: String { urls[0].user }

    /// Opens a connection to the first node that answers (each tried once), or nil.
    func open(heartbeatSeconds: Int, name: String) -> (connection: amqp_connection_state_t, url: AMQPURL)? {
        let start = next.withLock { $0 }
        for offset in 0..<urls.count {
            let index = (start + offset) % urls.count
            if let connection = AMQPConnector.open(urls[index], heartbeatSeconds: heartbeatSeconds, name: name) {
                next.withLock { $0 = index }
                return (connection, urls[index])
            }
        }
        return nil
    }

    /// After a lost connection: the next `open` starts with the node after the one that failed.
    func moveOn() {
        guard urls.count > 1 else { return }
        next.withLock { $0 = ($0 + 1) % urls.count }
    }
}
