import Foundation

/// App secret keys (`sk_` + 256 random bits), for app backends: only SHA-256 hashes are stored,
/// the key itself is shown once. A rotation makes a new key and gives the keys still live an
/// end (`expires_at`) after an overlap, so a backend can roll the new key out before the old
/// one stops working. A lookup by the hash of 256 random bits needs no constant-time compare:
/// the index's timing can only tell about the hash, which reveals nothing of a key.
public struct SecretKeyStore: Sendable {
    let pool: PGPool

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

    /// A new key for the app inside the caller's transaction; returns (id, key). The key is
    /// never stored: show it once.
    public static func add(appId: String, on connection: PGConnection) throws -> (id: String, key: String) {
        let key = Identifiers.secret("sk")
        let id = Identifiers.prefixed("skid")
        try connection.query("INSERT INTO app_secret_keys (app_id, id, key_hash) VALUES ($1, $2, $3)",
                             [appId, id, PGParam.bytea(Digest.sha256(key))])
        return (id, key)
    }

    /// What a rotation made: the new key (shown once) and when the keys it replaces stop.
    public struct Rotation: Sendable {
        public let keyId: String
        public let secretKey: String
        public let previousKeysExpireAtMicros: Int64
        public let previousKeyIds: [String]
    }

    /// Rotates the app's secret key in one transaction: every live key ends `overlapSeconds`
    /// from now (or sooner, if it already ended sooner) and a new key starts. nil: no such app.
    public func rotate(appId: String, overlapSeconds: Int) throws -> Rotation? {
        try pool.transaction { connection in
            // Serialises rotations of one app (a row lock on the app's own key rows).
            let previous = try connection.query("""
                UPDATE app_secret_keys
                SET expires_at = least(coalesce(expires_at, 'infinity'), now() + make_interval(secs => $2::int))
                WHERE app_id = $1 AND (expires_at IS NULL OR expires_at > now())
                RETURNING id, (extract(epoch FROM expires_at) * 1000000)::bigint AS expires_us
                """, [appId, String(overlapSeconds)])
            if previous.isEmpty, try connection.query("SELECT 1 FROM apps WHERE id = $1", [appId]).isEmpty { return nil }
            let added = try Self.add(appId: appId, on: connection)
            return Rotation(keyId: added.id, secretKey: added.key,
                            previousKeysExpireAtMicros: try previous.map { try $0.int64("expires_us") }.max() ?? 0,
                            previousKeyIds: try previous.map { try $0.string("id") })
        }
    }
}
