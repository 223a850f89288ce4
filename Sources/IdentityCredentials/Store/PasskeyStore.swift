import IdentityKit

/// A registered passkey row.
public struct PasskeyRecord: Sendable {
    public let appId: String
    public let id: String
    public let uid: String
    public let credentialId: [UInt8]
    public let userHandle: [UInt8]
    public let publicKey: [UInt8]
    public let signCount: Int64
    public let transports: [String]
    public let backupEligible: Bool
    public let backupState: Bool
    public let aaguid: [UInt8]
    public let name: String
    public let createdAtMicros: Int64
    public let lastUsedAtMicros: Int64?

    static let columns = """
        app_id, id, uid, credential_id, user_handle, public_key, sign_count, transports, backup_eligible, backup_state, \
        aaguid, name, (extract(epoch FROM created_at) * 1000000)::bigint AS created_us, \
        (extract(epoch FROM last_used_at) * 1000000)::bigint AS last_used_us
        """

    init(row: PGRow) throws {
        appId = try row.string("app_id")
        id = try row.string("id")
        uid = try row.string("uid")
        credentialId = try row.bytes("credential_id")
        userHandle = try row.bytes("user_handle")
        publicKey = try row.bytes("public_key")
        signCount = try row.int64("sign_count")
        transports = try row.stringArray("transports")
        backupEligible = try row.bool("backup_eligible")
        backupState = try row.bool("backup_state")
        aaguid = try row.bytes("aaguid")
        name = try row.string("name")
        createdAtMicros = try row.int64("created_us")
        lastUsedAtMicros = try row.optionalString("last_used_us").flatMap(Int64.init)
    }
}

/// A passkey ceremony between its two calls: a flow row with an id, an expiry, an attempt
/// counter and a single use (docs/architecture.md, "Processes": passkeys).
public struct PasskeyFlow: Sendable {
    public let id: String
    public let purpose: String
    public let uid: String?
    public let challengeHash: [UInt8]
    public let allowedCredentialIds: [String]
    public let identified: Bool
}

/// Passkey settings, credentials and flows. Every query names the app.
public struct PasskeyStore: Sendable {
    let pool: PGPool

    public init(pool: PGPool) { self.pool = pool }

    // MARK: settings

    public func settings(appId: String) throws -> WebAuthnSettings? {
        try pool.withConnection { connection in
            guard let row = try connection.query("""
                SELECT rp_id, rp_name, origins, require_user_verification FROM app_webauthn_settings WHERE app_id = $1
                """, [appId]).first else { return nil }
            return WebAuthnSettings(rpId: try row.string("rp_id"), rpName: try row.optionalString("rp_name"),
                                    origins: try row.stringArray("origins"),
                                    requireUserVerification: try row.bool("require_user_verification"))
        }
    }

    public func save(appId: String, _ settings: WebAuthnSettings) throws {
        try pool.withConnection { connection in
            try connection.query("""
                INSERT INTO app_webauthn_settings (app_id, rp_id, rp_name, origins, require_user_verification, updated_at)
                VALUES ($1, $2, $3, $4, $5, now())
                ON CONFLICT (app_id) DO UPDATE SET rp_id = EXCLUDED.rp_id, rp_name = EXCLUDED.rp_name,
                    origins = EXCLUDED.origins, require_user_verification = EXCLUDED.require_user_verification,
                    updated_at = now()
                """, [appId, settings.rpId, settings.rpName, PGParam.textArray(settings.origins),
                      PGParam.bool(settings.requireUserVerification)])
        }
    }

    // MARK: flows

    public func createFlow(appId: String, purpose: String, uid: String?, challengeHash: [UInt8],
                           allowedCredentialIds: [String], identified: Bool, lifetimeSeconds: Int) throws -> String {
        let id = Identifiers.prefixed("pkf")
        try pool.withConnection { connection in
            try connection.query("""
                INSERT INTO passkey_flows (app_id, id, purpose, uid, challenge_hash, allowed_credential_ids, identified,
                                           expires_at)
                VALUES ($1, $2, $3, $4, $5, $6, $7, now() + make_interval(secs => $8))
                """, [appId, id, purpose, uid, PGParam.bytea(challengeHash), PGParam.textArray(allowedCredentialIds),
                      PGParam.bool(identified), String(lifetimeSeconds)])
        }
        return id
    }

    public enum Spend: Sendable {
        case spent(PasskeyFlow)
        /// No open flow by that key: unknown, already used, or expired.
        case gone
    }

    /// Spends a sign-in flow: one statement marks it used and counts the attempt, so two
    /// verifications racing on one flow cannot both see it open.
    public func spendSignIn(appId: String, flowId: String, on connection: PGConnection) throws -> Spend {
        try spend(connection.query("""
            UPDATE passkey_flows SET spent_at = now(), attempts = attempts + 1
            WHERE app_id = $1 AND id = $2 AND purpose = 'sign_in' AND spent_at IS NULL AND expires_at > now()
            RETURNING id, purpose, uid, challenge_hash, allowed_credential_ids, identified
            """, [appId, flowId]))
    }

    /// Spends this user's open registration flow whose challenge hashes to `challengeHash`.
    public func spendRegistration(appId: String, uid: String, challengeHash: [UInt8],
                                  on connection: PGConnection) throws -> Spend {
        try spend(connection.query("""
            UPDATE passkey_flows SET spent_at = now(), attempts = attempts + 1
            WHERE app_id = $1 AND uid = $2 AND challenge_hash = $3 AND purpose = 'register'
              AND spent_at IS NULL AND expires_at > now()
            RETURNING id, purpose, uid, challenge_hash, allowed_credential_ids, identified
            """, [appId, uid, PGParam.bytea(challengeHash)]))
    }

    private func spend(_ rows: [PGRow]) throws -> Spend {
        guard let row = rows.first else { return .gone }
        return .spent(PasskeyFlow(id: try row.string("id"), purpose: try row.string("purpose"),
                                  uid: try row.optionalString("uid"), challengeHash: try row.bytes("challenge_hash"),
                                  allowedCredentialIds: try row.stringArray("allowed_credential_ids"),
                                  identified: try row.bool("identified")))
    }

    // MARK: credentials

    public func credentials(appId: String, uid: String) throws -> [PasskeyRecord] {
        try pool.withConnection { try credentials(appId: appId, uid: uid, on: $0) }
    }

    public func credentials(appId: String, uid: String, on connection: PGConnection) throws -> [PasskeyRecord] {
        try connection.query("""
            SELECT \(PasskeyRecord.columns) FROM passkey_credentials WHERE app_id = $1 AND uid = $2 ORDER BY created_at, id
            """, [appId, uid]).map(PasskeyRecord.init(row:))
    }

    /// The credential an assertion names, locked for the sign-count update.
    public func lockCredential(appId: String, credentialId: [UInt8], on connection: PGConnection) throws -> PasskeyRecord? {
        try connection.query("""
            SELECT \(PasskeyRecord.columns) FROM passkey_credentials WHERE app_id = $1 AND credential_id = $2 FOR UPDATE
            """, [appId, PGParam.bytea(credentialId)]).first.map(PasskeyRecord.init(row:))
    }

    public struct NewCredential: Sendable {
        public var credentialId: [UInt8]
        public var userHandle: [UInt8]
        public var publicKey: [UInt8]
        public var algorithm: Int64
        public var signCount: Int64
        public var transports: [String]
        public var backupEligible: Bool
        public var backupState: Bool
        public var aaguid: [UInt8]
        public var attestationFormat: String
        public var name: String

        public init(credentialId: [UInt8], userHandle: [UInt8], publicKey: [UInt8], algorithm: Int64, signCount: Int64,
                    transports: [String], backupEligible: Bool, backupState: Bool, aaguid: [UInt8],
                    attestationFormat: String, name: String) {
            self.credentialId = credentialId
            self.userHandle = userHandle
            self.publicKey = publicKey
            self.algorithm = algorithm
            self.signCount = signCount
            self.transports = transports
            self.backupEligible = backupEligible
            self.backupState = backupState
            self.aaguid = aaguid
            self.attestationFormat = attestationFormat
            self.name = name
        }
    }

    /// Nil when the credential id is registered already (in this app): the unique index decides.
    public func insert(_ credential: NewCredential, appId: String, uid: String,
                       on connection: PGConnection) throws -> PasskeyRecord? {
        try connection.query("""
            INSERT INTO passkey_credentials (app_id, id, uid, credential_id, user_handle, public_key, algorithm, sign_count,
                transports, backup_eligible, backup_state, aaguid, attestation_format, name)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
            ON CONFLICT (app_id, credential_id) DO NOTHING
            RETURNING \(PasskeyRecord.columns)
            """, [appId, Identifiers.prefixed("pk"), uid, PGParam.bytea(credential.credentialId),
                  PGParam.bytea(credential.userHandle), PGParam.bytea(credential.publicKey), String(credential.algorithm),
                  String(credential.signCount), PGParam.textArray(credential.transports),
                  PGParam.bool(credential.backupEligible), PGParam.bool(credential.backupState),
                  PGParam.bytea(credential.aaguid), credential.attestationFormat, credential.name])
            .first.map(PasskeyRecord.init(row:))
    }

    public func recordUse(appId: String, id: String, signCount: Int64, backupState: Bool,
                          on connection: PGConnection) throws {
        try connection.query("""
            UPDATE passkey_credentials SET sign_count = $3, backup_state = $4, last_used_at = now()
            WHERE app_id = $1 AND id = $2
            """, [appId, id, String(signCount), PGParam.bool(backupState)])
    }

    public func rename(appId: String, uid: String, id: String, name: String) throws -> PasskeyRecord? {
        try pool.withConnection { connection in
            try connection.query("""
                UPDATE passkey_credentials SET name = $4 WHERE app_id = $1 AND uid = $2 AND id = $3
                RETURNING \(PasskeyRecord.columns)
                """, [appId, uid, id, name]).first.map(PasskeyRecord.init(row:))
        }
    }

    /// How many passkeys the user has (the "last way in" count).
    public func count(appId: String, uid: String, on connection: PGConnection) throws -> Int {
        try connection.query("SELECT count(*) AS n FROM passkey_credentials WHERE app_id = $1 AND uid = $2",
                             [appId, uid]).first.map { try $0.int("n") } ?? 0
    }

    /// Removes every passkey of the user and the user's open ceremonies (a registration begun
    /// with a session that is about to end); returns the removed passkeys' ids, oldest first.
    public func deleteAll(appId: String, uid: String, on connection: PGConnection) throws -> [String] {
        try connection.query("DELETE FROM passkey_flows WHERE app_id = $1 AND uid = $2", [appId, uid])
        return try connection.query("""
            WITH removed AS (DELETE FROM passkey_credentials WHERE app_id = $1 AND uid = $2 RETURNING id, created_at)
            SELECT id FROM removed ORDER BY created_at, id
            """, [appId, uid]).map { try $0.string("id") }
    }

    public func delete(appId: String, uid: String, id: String, on connection: PGConnection) throws -> Bool {
        try !connection.query("""
            DELETE FROM passkey_credentials WHERE app_id = $1 AND uid = $2 AND id = $3 RETURNING id
            """, [appId, uid, id]).isEmpty
    }
}
