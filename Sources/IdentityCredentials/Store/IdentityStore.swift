import IdentityKit

/// Provider identities linked to users (`user_identities`), scoped by app.
public struct IdentityStore: Sendable {
    let pool: PGPool

    public init(pool: PGPool) { self.pool = pool }

    public enum Conflict: Error, Sendable {
        /// The identity belongs to another user, or this user already has one of this provider.
        case taken
    }

    /// The user holding this provider identity, if any.
    public func owner(appId: String, provider: String, subject: String, on connection: PGConnection) throws -> String? {
        try connection.query("""
            SELECT uid FROM user_identities WHERE app_id = $1 AND provider = $2 AND subject = $3
            """, [appId, provider, subject]).first?.string("uid")
    }

    public func link(appId: String, uid: String, provider: String, subject: String, email: String?,
                     on connection: PGConnection) throws {
        do {
            try connection.query("""
                INSERT INTO user_identities (app_id, provider, subject, uid, email) VALUES ($1, $2, $3, $4, $5)
                """, [appId, provider, subject, uid, email])
        } catch StoreError.uniqueViolation {
            throw Conflict.taken
        }
    }

    /// Removes the user's identity of `provider`; false when there was none.
    public func unlink(appId: String, uid: String, provider: String, on connection: PGConnection) throws -> Bool {
        try !connection.query("""
            DELETE FROM user_identities WHERE app_id = $1 AND uid = $2 AND provider = $3 RETURNING 1
            """, [appId, uid, provider]).isEmpty
    }

    /// Removes every provider identity of the user; returns their providers, sorted.
    public func unlinkAll(appId: String, uid: String, on connection: PGConnection) throws -> [String] {
        try connection.query("DELETE FROM user_identities WHERE app_id = $1 AND uid = $2 RETURNING provider",
                             [appId, uid]).map { try $0.string("provider") }.sorted()
    }

    /// Keeps Apple's refresh token (sealed) on the user's Apple identity. False when that
    /// identity is no longer the user's (the account was deleted, or the Apple ID unlinked,
    /// while the code waited for its exchange): then nothing is stored.
    public func storeAppleRefreshToken(appId: String, uid: String, subject: String, clientId: String,
                                       sealed: [UInt8]) throws -> Bool {
        try pool.withConnection { connection in
            try !connection.query("""
                UPDATE user_identities SET apple_refresh_token_enc = $3, apple_client_id = $4
                WHERE app_id = $1 AND provider = 'apple' AND subject = $2 AND uid = $5
                RETURNING 1
                """, [appId, subject, PGParam.bytea(sealed), clientId, uid]).isEmpty
        }
    }

    /// A user's identity of one provider, with what revoking it at Apple needs.
    public struct Linked: Sendable {
        public let subject: String
        public let appleClientId: String?
        public let sealedAppleRefreshToken: [UInt8]?
    }

    /// `lock` takes the row lock (`FOR UPDATE`) until the transaction ends: account deletion
    /// reads the Apple token that way, so an Apple code exchange finishing at the same moment
    /// either stores its token before (and the deletion revokes it) or finds the row gone after
    /// (and revokes it itself), never stores it into a row about to vanish unseen.
    public func identity(appId: String, uid: String, provider: String, lock: Bool = false,
                         on connection: PGConnection) throws -> Linked? {
        try connection.query("""
            SELECT subject, apple_client_id, apple_refresh_token_enc FROM user_identities
            WHERE app_id = $1 AND uid = $2 AND provider = $3
            """ + (lock ? " FOR UPDATE" : ""), [appId, uid, provider]).first.map { row in
            try Linked(subject: row.string("subject"), appleClientId: row.optionalString("apple_client_id"),
                       sealedAppleRefreshToken: row.optionalBytes("apple_refresh_token_enc"))
        }
    }
}
