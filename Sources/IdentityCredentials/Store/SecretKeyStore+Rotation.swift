import IdentityKit

/// New app secret keys (their hashes written to `app_secret_keys`) and rotations: the token
/// worker's admin command and identityctl.
extension SecretKeyStore {
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
