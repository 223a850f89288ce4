import IdentityKit

/// Sign-ins waiting for a second factor (docs/flows.md, "MFA": a challenge is a row with an id, an
/// expiry and an attempt counter changed atomically). The client holds the challenge token; only
/// its SHA-256 is stored.
public struct MfaChallengeStore: Sendable {
    public static let lifetimeSeconds = 300
    public static let maximumAttempts = 5

    public struct Challenge: Sendable {
        public let id: String
        public let uid: String
        public let amr: [String]
        public let methods: [String]
        public let createdAccount: Bool
        public let ip: String?
        public let userAgent: String?
        public let expiresAtMicros: Int64
        public let expired: Bool
        public let attempts: Int
        /// Set once a code finished the challenge: the session it started.
        public let sessionId: String?
    }

    let pool: PGPool

    public init(pool: PGPool) { self.pool = pool }

    static let columns = """
        id, uid, amr, methods, created_account, ip, user_agent, attempts, session_id,
        (extract(epoch FROM expires_at) * 1000000)::bigint AS expires_us, expires_at <= now() AS expired
        """

    static func challenge(_ row: PGRow) throws -> Challenge {
        try Challenge(id: row.string("id"), uid: row.string("uid"), amr: row.stringArray("amr"),
                      methods: row.stringArray("methods"), createdAccount: row.bool("created_account"),
                      ip: row.optionalString("ip"), userAgent: row.optionalString("user_agent"),
                      expiresAtMicros: row.int64("expires_us"), expired: row.bool("expired"),
                      attempts: row.int("attempts"), sessionId: row.optionalString("session_id"))
    }

    /// Creates a challenge in the first factor's transaction; returns its expiry (µs).
    public func create(appId: String, id: String, uid: String, tokenHash: [UInt8], amr: [String], methods: [String],
                       createdAccount: Bool, ip: String, userAgent: String, commandId: String?,
                       on connection: PGConnection) throws -> Int64 {
        try connection.query("""
            INSERT INTO mfa_challenges (app_id, id, uid, token_hash, amr, methods, created_account, ip, user_agent,
                                        expires_at, command_id)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, now() + make_interval(secs => $10), $11)
            RETURNING (extract(epoch FROM expires_at) * 1000000)::bigint AS expires_us
            """, [appId, id, uid, PGParam.bytea(tokenHash), PGParam.textArray(amr), PGParam.textArray(methods),
                  PGParam.bool(createdAccount), ip.isEmpty ? nil : ip, userAgent.isEmpty ? nil : String(userAgent.prefix(512)),
                  String(Self.lifetimeSeconds), commandId]).first.map { try $0.int64("expires_us") } ?? 0
    }

    /// The open challenge a first-factor command already created (redelivery), with its uid:
    /// `commandId` is the command's key (message id and body hash).
    public func createdBy(commandId: String, appId: String) throws -> Challenge? {
        try pool.withConnection { connection in
            try connection.query("""
                SELECT \(Self.columns) FROM mfa_challenges
                WHERE app_id = $1 AND command_id = $2 AND expires_at > now() AND session_id IS NULL
                """, [appId, commandId]).first.map(Self.challenge)
        }
    }

    /// The challenge of a token, locked until the transaction ends: parallel verifications of
    /// one challenge queue here.
    public func lock(appId: String, tokenHash: [UInt8], on connection: PGConnection) throws -> Challenge? {
        try connection.query("""
            SELECT \(Self.columns) FROM mfa_challenges WHERE app_id = $1 AND token_hash = $2 FOR UPDATE
            """, [appId, PGParam.bytea(tokenHash)]).first.map(Self.challenge)
    }

    /// Counts a wrong code; the fifth kills the challenge (deleted). True while it lives.
    public func countFailure(appId: String, id: String, on connection: PGConnection) throws -> Bool {
        let attempts = try connection.query("""
            UPDATE mfa_challenges SET attempts = attempts + 1 WHERE app_id = $1 AND id = $2 AND session_id IS NULL
            RETURNING attempts
            """, [appId, id]).first.map { try $0.int("attempts") } ?? Self.maximumAttempts
        if attempts >= Self.maximumAttempts {
            try delete(appId: appId, id: id, on: connection)
            return false
        }
        return true
    }

    /// Marks the challenge done with the session it started (kept until expiry, so a
    /// redelivered verification is answered from it).
    public func finish(appId: String, id: String, sessionId: String, on connection: PGConnection) throws {
        try connection.query("""
            UPDATE mfa_challenges SET session_id = $3 WHERE app_id = $1 AND id = $2 AND session_id IS NULL
            """, [appId, id, sessionId])
    }

    public func delete(appId: String, id: String, on connection: PGConnection) throws {
        try connection.query("DELETE FROM mfa_challenges WHERE app_id = $1 AND id = $2", [appId, id])
    }
}
