/// Users of one app. Every statement is scoped by `app_id`; uniqueness of emails and
/// usernames is decided by the database's unique indexes, not by a check before the insert.
public struct UserStore: Sendable {
    let pool: PGPool

    public init(pool: PGPool) { self.pool = pool }

    public struct NewUser: Sendable {
        public var email: String?
        public var username: String?
        public var firstName: String?
        public var lastName: String?
        public var passwordHash: String?
        public init(email: String?, username: String?, firstName: String?, lastName: String?, passwordHash: String?) {
            self.email = email
            self.username = username
            self.firstName = firstName
            self.lastName = lastName
            self.passwordHash = passwordHash
        }
    }

    public enum Conflict: Error, Sendable { case email, username }

    /// Inserts a user inside the caller's transaction; throws `Conflict` on a taken email or username.
    public func insert(_ user: NewUser, appId: String, on connection: PGConnection) throws -> UserRecord {
        do {
            let rows = try connection.query("""
                INSERT INTO users (app_id, uid, email, username, first_name, last_name, password_hash)
                VALUES ($1, $2, $3, $4, $5, $6, $7)
                RETURNING \(UserRecord.columns)
                """, [appId, Identifiers.nowULID(), user.email, user.username, user.firstName, user.lastName,
                      user.passwordHash])
            guard let row = rows.first else { throw StoreError.failed(sqlState: "", message: "no row returned") }
            return UserRecord(row: row)
        } catch StoreError.uniqueViolation(let constraint) {
            throw constraint == "users_username_per_app" ? Conflict.username : Conflict.email
        }
    }

    public func find(appId: String, uid: String) throws -> UserRecord? {
        try pool.withConnection { connection in
            try connection.query("SELECT \(UserRecord.columns) FROM users WHERE app_id = $1 AND uid = $2",
                                 [appId, uid]).first.map(UserRecord.init(row:))
        }
    }

    /// The user behind an access token, only while the token's session lives: one query serves
    /// `GET /v1/me` and refuses tokens of ended sessions before their `exp`.
    public func find(appId: String, uid: String, liveSessionId sessionId: String) throws -> UserRecord? {
        try pool.withConnection { connection in
            try connection.query("""
                SELECT \(UserRecord.columns) FROM users
                WHERE app_id = $1 AND uid = $2 AND EXISTS (
                    SELECT 1 FROM sessions s
                    WHERE s.app_id = $1 AND s.id = $3 AND s.uid = $2 AND s.ended_at IS NULL)
                """, [appId, uid, sessionId]).first.map(UserRecord.init(row:))
        }
    }

    /// Finds by email or username, case-insensitively.
    public func find(appId: String, identifier: String) throws -> UserRecord? {
        try pool.withConnection { connection in
            let column = identifier.contains("@") ? "email" : "username"
            return try connection.query("""
                SELECT \(UserRecord.columns) FROM users WHERE app_id = $1 AND lower(\(column)) = lower($2)
                """, [appId, identifier]).first.map(UserRecord.init(row:))
        }
    }

    /// A profile change: `set` replaces values, `clear` sets columns to NULL. Returns nil when
    /// the user does not exist in this app.
    public func updateProfile(appId: String, uid: String, set: [ProfileField: String],
                              clear: Set<ProfileField>) throws -> UserRecord? {
        var assignments = ["updated_at = now()"]
        var parameters: [String?] = [appId, uid]
        for field in ProfileField.allCases {
            if let value = set[field] {
                parameters.append(value)
                assignments.append("\(field.rawValue) = $\(parameters.count)")
            } else if clear.contains(field) {
                assignments.append("\(field.rawValue) = NULL")
            }
        }
        do {
            return try pool.withConnection { connection in
                try connection.query("""
                    UPDATE users SET \(assignments.joined(separator: ", "))
                    WHERE app_id = $1 AND uid = $2 RETURNING \(UserRecord.columns)
                    """, parameters).first.map(UserRecord.init(row:))
            }
        } catch StoreError.uniqueViolation {
            throw Conflict.username
        }
    }
}

/// The profile fields `PATCH /v1/me` may change, named as their columns.
public enum ProfileField: String, CaseIterable, Sendable {
    case firstName = "first_name"
    case lastName = "last_name"
    case photoURL = "photo_url"
    case username = "username"
}
