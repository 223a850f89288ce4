/// Sessions: what the gateway reads of them (liveness, age, assurance, the live list) and what
/// ends them. Their refresh tokens (hashes only) are IdentityCredentials' part of this store
/// (`SessionStore+RefreshTokens.swift`): the gateway links no code that touches one.
public struct SessionStore: Sendable {
    package let pool: PGPool

    public init(pool: PGPool) { self.pool = pool }

    /// True while the session exists for this user and has not ended: access tokens of an
    /// ended session are refused from that moment, not only at `exp`.
    public func isLive(appId: String, sessionId: String, uid: String) throws -> Bool {
        try pool.withConnection { connection in
            try !connection.query("""
                SELECT 1 FROM sessions WHERE app_id = $1 AND id = $2 AND uid = $3 AND ended_at IS NULL
                """, [appId, sessionId, uid]).isEmpty
        }
    }

    /// Seconds since the live session began (its sign-in; refreshes do not renew it), or nil
    /// when it is not a live session of this user.
    public func signedInSecondsAgo(appId: String, sessionId: String, uid: String) throws -> Int? {
        try pool.withConnection { connection in
            try connection.query("""
                SELECT floor(extract(epoch FROM now() - created_at))::int AS age FROM sessions
                WHERE app_id = $1 AND id = $2 AND uid = $3 AND ended_at IS NULL
                """, [appId, sessionId, uid]).first.map { try $0.int("age") }
        }
    }

    /// The live session's age in seconds (since its sign-in) and its assurance level, or nil
    /// when it is not a live session of this user: what step-up checks.
    public func assurance(appId: String, sessionId: String, uid: String) throws -> (ageSeconds: Int, aal: Int)? {
        try pool.withConnection { connection in
            try connection.query("""
                SELECT floor(extract(epoch FROM now() - created_at))::int AS age, aal FROM sessions
                WHERE app_id = $1 AND id = $2 AND uid = $3 AND ended_at IS NULL
                """, [appId, sessionId, uid]).first.map { (try $0.int("age"), try $0.int("aal")) }
        }
    }

    /// The session a command already started (its worker died after the commit, before the
    /// reply), if any, and whether it still lives: `commandId` is the command's key (message id
    /// and body hash), kept as the SHA-256 of `app_id:key` (`create` writes the same; the
    /// previous release kept the key itself in `command_id`, still read here).
    public func startedBy(commandId: String, appId: String) throws -> (sessionId: String, uid: String, amr: [String],
                                                                       aal: Int, createdAccount: Bool, live: Bool)? {
        try pool.withConnection { connection in
            try connection.query("""
                SELECT id, uid, amr, aal, created_account, (ended_at IS NULL AND expires_at > now()) AS live
                FROM sessions WHERE app_id = $1
                  AND (command_key = sha256(convert_to($1 || ':' || $2, 'UTF8'))
                       -- a session the previous release started (a command redelivered across an upgrade)
                       OR command_id = $2)
                """, [appId, commandId]).first.map {
                try ($0.string("id"), $0.string("uid"), $0.stringArray("amr"), $0.int("aal"), $0.bool("created_account"),
                     $0.bool("live"))
            }
        }
    }

    /// Ends live sessions of a user inside the caller's transaction, with a `session.revoked`
    /// event for each and their push devices unregistered: one session (`sessionId`), or all
    /// but `except`, or (`signedInWith`) those whose sign-in used that method (an `amr` value).
    /// Returns the ended ids.
    public func end(appId: String, uid: String, sessionId: String?, except: String? = nil, signedInWith: String? = nil,
                    reason: String, on connection: PGConnection) throws -> [String] {
        let ended = try connection.query("""
            UPDATE sessions SET ended_at = now(), end_reason = $5
            WHERE app_id = $1 AND uid = $2 AND ended_at IS NULL
              AND ($3::text IS NULL OR id = $3) AND ($4::text IS NULL OR id <> $4)
              AND ($6::text IS NULL OR $6 = ANY (amr))
            RETURNING id
            """, [appId, uid, sessionId, except, reason, signedInWith]).map { try $0.string("id") }
        for id in ended {
            try Events.sessionRevoked(appId: appId, uid: uid, sessionId: id, reason: reason, on: connection)
        }
        try DeviceStore.unregister(appId: appId, sessionIds: ended, reason: reason, on: connection)
        return ended
    }

    /// A live session as `GET /v1/me/sessions` shows it.
    public struct SessionSummary: Sendable {
        public let id: String
        public let createdAtMicros: Int64
        public let lastSeenAtMicros: Int64
        public let expiresAtMicros: Int64
        public let ip: String?
        public let userAgent: String?
        public let amr: [String]
    }

    /// The user's live sessions, newest first.
    public func live(appId: String, uid: String) throws -> [SessionSummary] {
        try pool.withConnection { connection in
            try connection.query("""
                SELECT id, ip, user_agent, amr,
                       (extract(epoch FROM created_at) * 1000000)::bigint AS created_us,
                       (extract(epoch FROM last_seen_at) * 1000000)::bigint AS seen_us,
                       (extract(epoch FROM expires_at) * 1000000)::bigint AS expires_us
                FROM sessions WHERE app_id = $1 AND uid = $2 AND ended_at IS NULL
                ORDER BY created_at DESC, id DESC
                """, [appId, uid]).map { row in
                try SessionSummary(id: row.string("id"), createdAtMicros: row.int64("created_us"),
                               lastSeenAtMicros: row.int64("seen_us"), expiresAtMicros: row.int64("expires_us"),
                               ip: row.optionalString("ip"), userAgent: row.optionalString("user_agent"), amr: row.stringArray("amr"))
            }
        }
    }
}
