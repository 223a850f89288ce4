import IdentityKit

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
        public var emailVerified = false
        public var phone: String?
        public var photoURL: String?
        /// BCP 47, canonical case.
        public var locale: String?
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
                INSERT INTO users (app_id, uid, email, username, first_name, last_name, password_hash,
                                   email_verified, phone, photo_url, locale)
                VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
                RETURNING \(UserRecord.columns)
                """, [appId, Identifiers.nowULID(), user.email, user.username, user.firstName, user.lastName,
                      user.passwordHash, PGParam.bool(user.emailVerified), user.phone, user.photoURL, user.locale])
            guard let row = rows.first else { throw StoreError.failed(sqlState: "", message: "no row returned") }
            return try UserRecord(row: row)
        } catch StoreError.uniqueViolation(let constraint) {
            throw constraint == "users_username_per_app" ? Conflict.username : Conflict.email
        }
    }

    /// The user with this email (case-insensitive) inside the caller's transaction, locked so
    /// a concurrent link or sign-up waits for this one.
    public func find(appId: String, email: String, on connection: PGConnection) throws -> UserRecord? {
        try connection.query("""
            SELECT \(UserRecord.columns) FROM users WHERE app_id = $1 AND lower(email) = lower($2) FOR UPDATE
            """, [appId, email]).first.map(UserRecord.init(row:))
    }

    public func find(appId: String, uid: String, on connection: PGConnection) throws -> UserRecord? {
        try connection.query("SELECT \(UserRecord.columns) FROM users WHERE app_id = $1 AND uid = $2",
                             [appId, uid]).first.map(UserRecord.init(row:))
    }

    // MARK: Guests

    /// The guest whose secret has this HMAC, created when there is none. Parallel first calls
    /// race on the unique index: one inserts, the others find its row.
    public func findOrCreateGuest(appId: String, secretHMAC: [UInt8], on connection: PGConnection) throws
        -> (user: UserRecord, created: Bool) {
        if let row = try connection.query("""
            INSERT INTO users (app_id, uid, is_guest, guest_secret_hmac) VALUES ($1, $2, true, $3)
            ON CONFLICT (app_id, guest_secret_hmac) WHERE guest_secret_hmac IS NOT NULL DO NOTHING
            RETURNING \(UserRecord.columns)
            """, [appId, Identifiers.nowULID(), PGParam.bytea(secretHMAC)]).first {
            return (try UserRecord(row: row), true)
        }
        guard let row = try connection.query("""
            SELECT \(UserRecord.columns) FROM users WHERE app_id = $1 AND guest_secret_hmac = $2
            """, [appId, PGParam.bytea(secretHMAC)]).first
        else { throw StoreError.failed(sqlState: "", message: "guest vanished between insert and select") }
        return (try UserRecord(row: row), false)
    }

    /// True when `uid` is a guest whose secret has this HMAC (compared by the database on the
    /// stored HMAC; the secret itself is never stored).
    public func guestSecretMatches(appId: String, uid: String, secretHMAC: [UInt8], on connection: PGConnection) throws -> Bool {
        try !connection.query("""
            SELECT 1 FROM users WHERE app_id = $1 AND uid = $2 AND is_guest AND guest_secret_hmac = $3
            """, [appId, uid, PGParam.bytea(secretHMAC)]).isEmpty
    }

    /// The guest `uid`, locked for its upgrade; nil when it is not (or no longer) a guest.
    public func lockGuest(appId: String, uid: String, on connection: PGConnection) throws -> UserRecord? {
        try connection.query("""
            SELECT \(UserRecord.columns) FROM users WHERE app_id = $1 AND uid = $2 AND is_guest FOR UPDATE
            """, [appId, uid]).first.map(UserRecord.init(row:))
    }

    /// What a guest's upgrade sets. Profile fields only fill empty ones: the guest's data stays.
    public struct Upgrade: Sendable {
        public var email: String?
        public var emailVerified = false
        public var username: String?
        public var firstName: String?
        public var lastName: String?
        public var passwordHash: String?
        public var photoURL: String?
        public var phone: String?
        /// Replaces the guest's locale when given.
        public var locale: String?
        public init() {}
    }

    /// Turns the guest into a permanent account: same uid, its data kept, the secret forgotten.
    public func upgradeGuest(appId: String, uid: String, _ upgrade: Upgrade, on connection: PGConnection) throws -> UserRecord {
        let given = { (value: String?) in value.flatMap { $0.isEmpty ? nil : $0 } }
        do {
            guard let row = try connection.query("""
                UPDATE users SET email = COALESCE($3, email), email_verified = email_verified OR $4,
                       username = COALESCE($5, username),
                       first_name = COALESCE(NULLIF(first_name, ''), $6), last_name = COALESCE(NULLIF(last_name, ''), $7),
                       password_hash = COALESCE($8, password_hash), photo_url = COALESCE(NULLIF(photo_url, ''), $9),
                       phone = COALESCE(NULLIF(phone, ''), $10), locale = COALESCE($11, locale),
                       is_guest = false, guest_secret_hmac = NULL, updated_at = now()
                WHERE app_id = $1 AND uid = $2 RETURNING \(UserRecord.columns)
                """, [appId, uid, upgrade.email, PGParam.bool(upgrade.emailVerified), upgrade.username,
                      given(upgrade.firstName), given(upgrade.lastName), upgrade.passwordHash, given(upgrade.photoURL),
                      given(upgrade.phone), upgrade.locale]).first
            else { throw StoreError.failed(sqlState: "", message: "guest vanished during upgrade") }
            return try UserRecord(row: row)
        } catch StoreError.uniqueViolation(let constraint) {
            throw constraint == "users_username_per_app" ? Conflict.username : Conflict.email
        }
    }

    /// Deletes the user; every row of theirs goes with it (foreign keys cascade).
    public func delete(appId: String, uid: String, on connection: PGConnection) throws {
        try connection.query("DELETE FROM users WHERE app_id = $1 AND uid = $2", [appId, uid])
    }

    public func markEmailVerified(appId: String, uid: String, on connection: PGConnection) throws {
        try connection.query("""
            UPDATE users SET email_verified = true, updated_at = now() WHERE app_id = $1 AND uid = $2
            """, [appId, uid])
    }

    /// What `takeOverByEmailProof` did to an unverified account.
    public struct EmailProofTakeover: Sendable, Equatable {
        /// Whether a password (set before the proof) was dropped.
        public let droppedPassword: Bool
    }

    /// The first proof of an unverified address: the email counts as verified from now on and
    /// the password set before the proof (by whoever registered the address) is gone. Nil when
    /// there is no such user or its email was verified already; the row is locked either way
    /// (the subquery's FOR UPDATE), and the subquery reads the password before the change.
    public func takeOverByEmailProof(appId: String, uid: String, on connection: PGConnection) throws -> EmailProofTakeover? {
        try connection.query("""
            UPDATE users u SET email_verified = true, password_hash = NULL, updated_at = now()
            FROM (SELECT uid, password_hash IS NOT NULL AS had_password FROM users
                  WHERE app_id = $1 AND uid = $2 FOR UPDATE) old
            WHERE u.app_id = $1 AND u.uid = old.uid AND NOT u.email_verified
            RETURNING old.had_password
            """, [appId, uid]).first.map { EmailProofTakeover(droppedPassword: try $0.bool("had_password")) }
    }

    public func setPassword(appId: String, uid: String, hash: String, on connection: PGConnection) throws {
        try connection.query("""
            UPDATE users SET password_hash = $3, updated_at = now() WHERE app_id = $1 AND uid = $2
            """, [appId, uid, hash])
    }

    /// Replaces the password hash only while it is still `expected` (the re-hash of an imported
    /// hash after a successful sign-in); false when it changed meanwhile.
    @discardableResult
    public func replacePasswordHash(appId: String, uid: String, expected: String, with hash: String,
                                    on connection: PGConnection) throws -> Bool {
        try !connection.query("""
            UPDATE users SET password_hash = $4 WHERE app_id = $1 AND uid = $2 AND password_hash = $3 RETURNING 1
            """, [appId, uid, expected, hash]).isEmpty
    }

    /// Locks the user's row until the transaction ends; false when there is no such user.
    public func lock(appId: String, uid: String, on connection: PGConnection) throws -> Bool {
        try !connection.query("SELECT 1 FROM users WHERE app_id = $1 AND uid = $2 FOR UPDATE", [appId, uid]).isEmpty
    }

    /// Fills profile fields that are empty with values a provider gave, and never replaces a
    /// value with an empty one (Apple sends the name only once; a user's own edits win).
    public func fillMissing(appId: String, uid: String, firstName: String?, lastName: String?, photoURL: String?,
                            phone: String?, on connection: PGConnection) throws -> UserRecord? {
        let given = { (value: String?) in value.flatMap { $0.isEmpty ? nil : $0 } }
        return try connection.query("""
            UPDATE users SET first_name = COALESCE(NULLIF(first_name, ''), $3),
                             last_name = COALESCE(NULLIF(last_name, ''), $4),
                             photo_url = COALESCE(NULLIF(photo_url, ''), $5),
                             phone = COALESCE(NULLIF(phone, ''), $6), updated_at = now()
            WHERE app_id = $1 AND uid = $2 RETURNING \(UserRecord.columns)
            """, [appId, uid, given(firstName), given(lastName), given(photoURL), given(phone)]).first
            .map(UserRecord.init(row:))
    }

    public func find(appId: String, uid: String) throws -> UserRecord? {
        try pool.withConnection { connection in
            try connection.query("SELECT \(UserRecord.columns) FROM users WHERE app_id = $1 AND uid = $2",
                                 [appId, uid]).first.map(UserRecord.init(row:))
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

    /// The stored locale of the account with this address, if there is one (messages to it are
    /// written in it, `MessageLanguages`).
    public func locale(appId: String, email: String, on connection: PGConnection) throws -> String? {
        try connection.query("SELECT locale FROM users WHERE app_id = $1 AND lower(email) = lower($2)", [appId, email])
            .first?.optionalString("locale")
    }

    public func locale(appId: String, uid: String, on connection: PGConnection) throws -> String? {
        try connection.query("SELECT locale FROM users WHERE app_id = $1 AND uid = $2", [appId, uid])
            .first?.optionalString("locale")
    }

    /// The locale of the account that verified this number.
    public func locale(appId: String, verifiedPhone phone: String, on connection: PGConnection) throws -> String? {
        try connection.query("SELECT locale FROM users WHERE app_id = $1 AND phone = $2 AND phone_verified", [appId, phone])
            .first?.optionalString("locale")
    }

    /// A profile change: `set` replaces values, `clear` sets columns to NULL. Returns nil when
    /// the user does not exist in this app.
    public func updateProfile(appId: String, uid: String, set: [ProfileField: String],
                              clear: Set<ProfileField>) throws -> UserRecord? {
        try pool.withConnection { try updateProfile(appId: appId, uid: uid, set: set, clear: clear, on: $0) }
    }

    /// The same, inside the caller's transaction.
    public func updateProfile(appId: String, uid: String, set: [ProfileField: String], clear: Set<ProfileField>,
                              on connection: PGConnection) throws -> UserRecord? {
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
            return try connection.query("""
                UPDATE users SET \(assignments.joined(separator: ", "))
                WHERE app_id = $1 AND uid = $2 RETURNING \(UserRecord.columns)
                """, parameters).first.map(UserRecord.init(row:))
        } catch StoreError.uniqueViolation {
            throw Conflict.username
        }
    }
}
