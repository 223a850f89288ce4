import IdentityKit

/// The console's invitation links (`console_invitations`, migration 0045): made with a member's
/// role (the Members page through the token worker, or `identityctl console invite`), read and
/// spent by the token worker. Rows are found by the token's hash only, which nothing outside
/// this store names (the gateway may not read it: scripts/check-gateway-secrets.py).
public struct ConsoleInvitationStore: Sendable {
    public enum State: String, Sendable {
        case open, expired, accepted
    }

    public struct Found: Sendable {
        public let id: Int64
        public let appId: String
        public let appName: String
        public let email: String
        public let role: ConsoleStore.Role
        public let state: State
    }

    public init() {}

    /// A new link for `email`'s role in `appId` (the role row must exist): its token, shown
    /// once, in the mail or on identityctl's output.
    public func create(appId: String, email: String, on connection: PGConnection) throws -> String {
        let token = ConsoleInvitationLink.newToken()
        try connection.query("""
            INSERT INTO console_invitations (invitation_hash, app_id, email, expires_at)
            VALUES ($1, $2, $3, now() + make_interval(secs => $4))
            """, [PGParam.bytea(ConsoleInvitationLink.hash(token)), appId, email, String(ConsoleInvitationLink.lifetimeSeconds)])
        return token
    }

    /// The invitation of `token`, locked when `forUpdate` (its acceptance), nil when the token is
    /// unknown or its role was removed.
    public func find(token: String, forUpdate: Bool, on connection: PGConnection) throws -> Found? {
        guard ConsoleInvitationLink.isWellFormed(token) else { return nil }
        let row = try connection.query("""
            SELECT i.id, i.app_id, a.name AS app_name, i.email, r.role,
                   CASE WHEN i.accepted_at IS NOT NULL THEN 'accepted' WHEN i.expires_at <= now() THEN 'expired'
                        ELSE 'open' END AS state
            FROM console_invitations i
            JOIN console_roles r ON r.app_id = i.app_id AND r.email = i.email
            JOIN apps a ON a.id = i.app_id
            WHERE i.invitation_hash = $1
            \(forUpdate ? "FOR UPDATE OF i" : "")
            """, [PGParam.bytea(ConsoleInvitationLink.hash(token))]).first
        guard let row, let role = ConsoleStore.Role(rawValue: try row.string("role")),
              let state = State(rawValue: try row.string("state")) else { return nil }
        return Found(id: try row.int64("id"), appId: try row.string("app_id"), appName: try row.string("app_name"),
                     email: try row.string("email"), role: role, state: state)
    }

    public func markAccepted(id: Int64, on connection: PGConnection) throws {
        try connection.query("UPDATE console_invitations SET accepted_at = now() WHERE id = $1", [String(id)])
    }
}
