import IdentityKit

/// A user's second factors (docs/api-contract.md, "MFA"): TOTP (sealed secret, last accepted step),
/// email, and backup codes (salted keyed hashes, `BackupCodeHash`). Only token workers hold this store's grants. Every
/// query is scoped by app and user; each change that must happen once is one conditional
/// statement, so the database decides races.
public struct MfaStore: Sendable {
    public enum Method: String, Sendable, CaseIterable {
        case totp, email, sms
    }

    /// What `GET /v1/me/mfa` shows.
    public struct Status: Sendable {
        public var methods: [String]
        public var backupCodesRemaining: Int
        public var lastUsedAtMicros: Int64?
        public var enabledAtMicros: Int64?
        public var enabled: Bool { !methods.isEmpty }
    }

    public static let backupCodeCount = 10

    let pool: PGPool

    public init(pool: PGPool) { self.pool = pool }

    /// The confirmed (switched on) second factors of a user, in a fixed order.
    public func confirmedMethods(appId: String, uid: String, on connection: PGConnection) throws -> [Method] {
        let names = try connection.query("""
            SELECT method FROM mfa_factors WHERE app_id = $1 AND uid = $2 AND confirmed_at IS NOT NULL
            """, [appId, uid]).map { try $0.string("method") }
        return Method.allCases.filter { names.contains($0.rawValue) }
    }

    public func status(appId: String, uid: String, on connection: PGConnection) throws -> Status {
        let methods = try confirmedMethods(appId: appId, uid: uid, on: connection).map(\.rawValue)
        let row = try connection.query("""
            SELECT (SELECT count(*) FROM mfa_backup_codes WHERE app_id = $1 AND uid = $2 AND spent_at IS NULL) AS remaining,
                   (SELECT (extract(epoch FROM max(last_used_at)) * 1000000)::bigint FROM mfa_factors
                     WHERE app_id = $1 AND uid = $2 AND confirmed_at IS NOT NULL) AS used_us,
                   (SELECT (extract(epoch FROM min(confirmed_at)) * 1000000)::bigint FROM mfa_factors
                     WHERE app_id = $1 AND uid = $2 AND confirmed_at IS NOT NULL) AS enabled_us
            """, [appId, uid]).first
        return Status(methods: methods, backupCodesRemaining: methods.isEmpty ? 0 : try row?.int("remaining") ?? 0,
                      lastUsedAtMicros: try row?.optionalString("used_us").flatMap { Int64($0) },
                      enabledAtMicros: try row?.optionalString("enabled_us").flatMap { Int64($0) })
    }

    // MARK: Enrolment

    /// Starts (or restarts) enrolment of `method`, unconfirmed. False when the method is
    /// already on: switching it off first (with a code) is the way to replace it.
    public func begin(_ method: Method, appId: String, uid: String, sealedSecret: [UInt8]?,
                      on connection: PGConnection) throws -> Bool {
        try !connection.query("""
            INSERT INTO mfa_factors (app_id, uid, method, secret_enc) VALUES ($1, $2, $3, $4)
            ON CONFLICT (app_id, uid, method) DO UPDATE
            SET secret_enc = EXCLUDED.secret_enc, last_step = -1, created_at = now()
            WHERE mfa_factors.confirmed_at IS NULL
            RETURNING 1
            """, [appId, uid, method.rawValue, sealedSecret.map(PGParam.bytea)]).isEmpty
    }

    /// The sealed TOTP secret and whether it is confirmed.
    public func totp(appId: String, uid: String, on connection: PGConnection) throws -> (sealed: [UInt8], confirmed: Bool)? {
        try connection.query("""
            SELECT secret_enc, confirmed_at IS NOT NULL AS confirmed FROM mfa_factors
            WHERE app_id = $1 AND uid = $2 AND method = 'totp' AND secret_enc IS NOT NULL
            """, [appId, uid]).first.map { (try $0.bytes("secret_enc"), try $0.bool("confirmed")) }
    }

    /// Accepts TOTP time step `step` once: one UPDATE moves `last_step` forward only, so the
    /// same code (or an older one) presented again, even in parallel, finds nothing to update.
    /// `confirming` also switches the factor on (enrolment's first code).
    public func acceptTOTPStep(_ step: Int64, appId: String, uid: String, confirming: Bool,
                               on connection: PGConnection) throws -> Bool {
        try !connection.query("""
            UPDATE mfa_factors SET last_step = $3, last_used_at = now(),
                   confirmed_at = CASE WHEN $4 THEN COALESCE(confirmed_at, now()) ELSE confirmed_at END
            WHERE app_id = $1 AND uid = $2 AND method = 'totp' AND last_step < $3
              AND (confirmed_at IS NOT NULL OR $4)
            RETURNING 1
            """, [appId, uid, String(step), PGParam.bool(confirming)]).isEmpty
    }

    /// Switches a started email (or SMS) factor on, or records its use.
    public func markUsed(_ method: Method, appId: String, uid: String, confirming: Bool,
                         on connection: PGConnection) throws -> Bool {
        try !connection.query("""
            UPDATE mfa_factors SET last_used_at = now(),
                   confirmed_at = CASE WHEN $4 THEN COALESCE(confirmed_at, now()) ELSE confirmed_at END
            WHERE app_id = $1 AND uid = $2 AND method = $3 AND (confirmed_at IS NOT NULL OR $4)
            RETURNING 1
            """, [appId, uid, method.rawValue, PGParam.bool(confirming)]).isEmpty
    }

    /// Whether `method` was started (confirmed or not).
    public func isStarted(_ method: Method, appId: String, uid: String, on connection: PGConnection) throws -> Bool {
        try !connection.query("""
            SELECT 1 FROM mfa_factors WHERE app_id = $1 AND uid = $2 AND method = $3
            """, [appId, uid, method.rawValue]).isEmpty
    }

    // MARK: Backup codes

    /// Replaces the user's backup codes with these (the old set dies).
    public func replaceBackupCodes(_ codes: [BackupCodeHash], appId: String, uid: String,
                                   on connection: PGConnection) throws {
        try connection.query("DELETE FROM mfa_backup_codes WHERE app_id = $1 AND uid = $2", [appId, uid])
        for code in codes {
            try connection.query("""
                INSERT INTO mfa_backup_codes (app_id, uid, code_hmac, salt) VALUES ($1, $2, $3, $4)
                """, [appId, uid, PGParam.bytea(code.hmac), code.salt.map(PGParam.bytea)])
        }
    }

    /// The user's codes not spent yet, to check a typed code against: each has its own salt,
    /// so the code cannot be looked up by its hash (at most `backupCodeCount` rows).
    public func unspentBackupCodes(appId: String, uid: String, on connection: PGConnection) throws -> [BackupCodeHash] {
        try connection.query("""
            SELECT code_hmac, salt FROM mfa_backup_codes WHERE app_id = $1 AND uid = $2 AND spent_at IS NULL
            """, [appId, uid]).map { BackupCodeHash(salt: try $0.optionalBytes("salt"), hmac: try $0.bytes("code_hmac")) }
    }

    /// Spends one backup code (the row whose `code_hmac` this is): one UPDATE whose
    /// `spent_at IS NULL` condition lets exactly one of any number of parallel uses win.
    public func spendBackupCode(_ hmac: [UInt8], appId: String, uid: String, on connection: PGConnection) throws -> Bool {
        try !connection.query("""
            UPDATE mfa_backup_codes SET spent_at = now()
            WHERE app_id = $1 AND uid = $2 AND code_hmac = $3 AND spent_at IS NULL
            RETURNING 1
            """, [appId, uid, PGParam.bytea(hmac)]).isEmpty
    }

    // MARK: Switching off

    /// What `remove` took away.
    public struct Removal: Sendable, Equatable {
        /// The factors that were on (confirmed), in `Method.allCases` order; a factor still
        /// being enrolled goes too but is not one of them.
        public var confirmedMethods: [Method]
        /// Backup codes removed, spent or not.
        public var backupCodes: Int
        public var wasOn: Bool { !confirmedMethods.isEmpty }
    }

    /// Removes every factor (confirmed or being enrolled), every backup code and every open
    /// challenge of the user.
    public func remove(appId: String, uid: String, on connection: PGConnection) throws -> Removal {
        let confirmed = try connection.query("""
            DELETE FROM mfa_factors WHERE app_id = $1 AND uid = $2 RETURNING method, confirmed_at IS NOT NULL AS confirmed
            """, [appId, uid]).filter { try $0.bool("confirmed") }.map { try $0.string("method") }
        let codes = try connection.query("DELETE FROM mfa_backup_codes WHERE app_id = $1 AND uid = $2 RETURNING 1",
                                         [appId, uid]).count
        try connection.query("DELETE FROM mfa_challenges WHERE app_id = $1 AND uid = $2", [appId, uid])
        return Removal(confirmedMethods: Method.allCases.filter { confirmed.contains($0.rawValue) }, backupCodes: codes)
    }

    /// Removes every factor and backup code of the user; true when MFA was on.
    public func removeAll(appId: String, uid: String, on connection: PGConnection) throws -> Bool {
        try remove(appId: appId, uid: uid, on: connection).wasOn
    }

    /// The admin API's "MFA reset" (a user who lost every factor and every backup code): all
    /// factors, codes and open challenges go, with an `mfa.disabled` event (reason
    /// `admin_reset`) for the audit trail. True when MFA was on. For the admin API's flow to
    /// call in its own transaction; runs as the token worker's role.
    public func adminReset(appId: String, uid: String, on connection: PGConnection) throws -> Bool {
        let wasOn = try removeAll(appId: appId, uid: uid, on: connection)
        if wasOn { try Events.mfaDisabled(appId: appId, uid: uid, reason: "admin_reset", on: connection) }
        return wasOn
    }
}
