import Foundation

/// Whose `republished` header a receiver believes. A message its publisher sent again after a
/// lost connection (`UnconfirmedPublishes`) may already have run, so the receiver answers it
/// from what the first run committed (a sign-in's session) instead of running it twice. That
/// answer is worth forging: so the header counts only on a message whose `user_id` (set by
/// every link and checked by RabbitMQ against the publishing connection's login) is a broker
/// user trusted to republish commands: the gateway's, which sends them, by default
/// (`IDENTITY_AMQP_TRUSTED_REPUBLISHERS`, a comma-separated list), and the receiver's own user
/// (a deployment that runs every process as one broker user has no boundary between them to
/// keep). From any other publisher (another worker's broker user) the header is ignored and the
/// command runs as a first delivery, proving its credentials again.
public enum RepublishTrust {
    public static let defaultPublishers = "identity-gateway"

    /// Read once per process.
    private static let configured: Set<String> = {
        brokerUsers(ProcessInfo.processInfo.environment["IDENTITY_AMQP_TRUSTED_REPUBLISHERS"] ?? defaultPublishers)
    }()

    /// Broker user names from a comma-separated list (this one, `IDENTITY_AMQP_EVENT_PUBLISHERS`).
    public static func brokerUsers(_ text: String) -> Set<String> {
        Set(text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty })
    }

    public static func publishers(ownUser: String) -> Set<String> {
        ownUser.isEmpty ? configured : configured.union([ownUser])
    }
}
