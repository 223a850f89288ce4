import IdentityKit

/// Users' verified phone numbers (E.164): the numbers phone sign-in finds accounts by. One
/// account per verified number and app, decided by the `users_verified_phone` unique index.
public struct UserPhoneStore: Sendable {
    public enum Conflict: Error, Sendable { case phone }

    public init() {}

    /// The user whose verified phone this is, locked (a concurrent sign-in or link waits).
    public func find(appId: String, phone: String, on connection: PGConnection) throws -> UserRecord? {
        try connection.query("""
            SELECT \(UserRecord.columns) FROM users WHERE app_id = $1 AND phone = $2 AND phone_verified FOR UPDATE
            """, [appId, phone]).first.map(UserRecord.init(row:))
    }

    /// The user's verified phone (E.164), if any: where the SMS second factor's codes go.
    public func verified(appId: String, uid: String, on connection: PGConnection) throws -> String? {
        try connection.query("""
            SELECT phone FROM users WHERE app_id = $1 AND uid = $2 AND phone_verified AND phone IS NOT NULL
            """, [appId, uid]).first?.optionalString("phone")
    }

    /// Forgets the user's phone, verified or not (the ownership rule: a number set before the
    /// first proof of the email is not the owner's). True when there was one.
    public func remove(appId: String, uid: String, on connection: PGConnection) throws -> Bool {
        try !connection.query("""
            UPDATE users SET phone = NULL, phone_verified = false, updated_at = now()
            WHERE app_id = $1 AND uid = $2 AND (phone IS NOT NULL OR phone_verified) RETURNING 1
            """, [appId, uid]).isEmpty
    }

    /// Makes `phone` the user's verified phone; `Conflict.phone` when another account has it.
    public func setVerified(appId: String, uid: String, phone: String, on connection: PGConnection) throws -> UserRecord {
        do {
            guard let row = try connection.query("""
                UPDATE users SET phone = $3, phone_verified = true, updated_at = now()
                WHERE app_id = $1 AND uid = $2 RETURNING \(UserRecord.columns)
                """, [appId, uid, phone]).first
            else { throw StoreError.failed(sqlState: "", message: "user vanished while its phone was set") }
            return try UserRecord(row: row)
        } catch StoreError.uniqueViolation(let constraint) where constraint == "users_verified_phone" {
            throw Conflict.phone
        }
    }
}
