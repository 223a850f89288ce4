import Foundation

/// App secret keys (`sk_` + 256 random bits), for app backends: only SHA-256 hashes are stored,
/// the key itself is shown once. A rotation makes a new key and gives the keys still live an
/// end (`expires_at`) after an overlap, so a backend can roll the new key out before the old
/// one stops working. A lookup by the hash of 256 random bits needs no constant-time compare:
/// the index's timing can only tell about the hash, which reveals nothing of a key.
///
/// Here: resolving a presented key, which the gateway does. Making keys and rotating them (which
/// write `app_secret_keys.key_hash`) are IdentityCredentials' part (`SecretKeyStore+Rotation.swift`).
public struct SecretKeyStore: Sendable {
    package let pool: PGPool

    public init(pool: PGPool) { self.pool = pool }

    /// The owner of a live key: the app (as the gateway reads apps) and the key's id.
    public struct Owner: Sendable, Equatable {
        public let app: AppRecord
        public let keyId: String
        /// When the key stops working (a rotation's overlap), in microseconds; nil: no end set.
        public let expiresAtMicros: Int64?
    }

    /// The app and key id of a live secret key, or nil. Through `secret_key_owner` (migration
    /// 0012), so the gateway resolves keys without the right to read a single hash.
    public func owner(ofKey key: String) throws -> Owner? {
        try pool.withConnection { connection in
            try connection.query("""
                SELECT a.id, a.name, a.app_key, a.issuer, a.access_token_ttl, o.key_id,
                       (extract(epoch FROM o.expires_at) * 1000000)::bigint AS expires_us
                FROM secret_key_owner($1) o JOIN apps a ON a.id = o.app_id
                """, [PGParam.bytea(Digest.sha256(key))]).first.map { row in
                try Owner(app: AppRecord(id: row.string("id"), name: row.string("name"), appKey: row.string("app_key"),
                                         issuer: row.string("issuer"), accessTokenTTL: row.int("access_token_ttl")),
                          keyId: row.string("key_id"), expiresAtMicros: row.optionalString("expires_us").flatMap(Int64.init))
            }
        }
    }
}
