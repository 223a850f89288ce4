import IdentityKit

/// Nonces this service issues for Apple sign-ins, stored as SHA-256 hashes (the form the
/// identity token carries). Valid `lifetime` seconds, spent by the first sign-in that commits.
public struct NonceStore: Sendable {
    let pool: PGPool

    public init(pool: PGPool) { self.pool = pool }

    /// A new raw nonce and its expiry (microseconds since the epoch).
    public func issue(appId: String, lifetimeSeconds: Int) throws -> (nonce: String, expiresAtMicros: Int64) {
        let nonce = Base64URL.encode(SecureRandom.bytes(32))
        let row = try pool.withConnection { connection in
            try connection.query("""
                INSERT INTO auth_nonces (app_id, nonce_hash, expires_at)
                VALUES ($1, $2, now() + make_interval(secs => $3))
                RETURNING (extract(epoch FROM expires_at) * 1000000)::bigint AS expires_us
                """, [appId, PGParam.bytea(Digest.sha256(nonce)), String(lifetimeSeconds)]).first
        }
        return (nonce, try row?.int64("expires_us") ?? 0)
    }

    /// True when the nonce with this hash was issued for this app, is unexpired and unspent.
    public func isUsable(appId: String, hash: [UInt8]) throws -> Bool {
        try pool.withConnection { connection in
            try !connection.query("""
                SELECT 1 FROM auth_nonces WHERE app_id = $1 AND nonce_hash = $2 AND spent_at IS NULL AND expires_at > now()
                """, [appId, PGParam.bytea(hash)]).isEmpty
        }
    }

    /// A nonce the client made (an app with `apple_nonce` `client`): recorded on first sight,
    /// valid until the identity token carrying it expires, so it is still spent once. Then
    /// usable exactly as an issued one (a refused sign-in spends nothing).
    public func acceptClientNonce(appId: String, hash: [UInt8], untilEpochSeconds: Int64) throws -> Bool {
        try pool.withConnection { connection in
            _ = try connection.query("""
                INSERT INTO auth_nonces (app_id, nonce_hash, expires_at) VALUES ($1, $2, to_timestamp($3))
                ON CONFLICT (app_id, nonce_hash) DO NOTHING
                """, [appId, PGParam.bytea(hash), String(untilEpochSeconds)])
            return try !connection.query("""
                SELECT 1 FROM auth_nonces WHERE app_id = $1 AND nonce_hash = $2 AND spent_at IS NULL AND expires_at > now()
                """, [appId, PGParam.bytea(hash)]).isEmpty
        }
    }

    /// Spends the nonce in the caller's transaction; false when it was spent meanwhile (a race
    /// decided by the row update, not by a read before it).
    public func spend(appId: String, hash: [UInt8], on connection: PGConnection) throws -> Bool {
        try !connection.query("""
            UPDATE auth_nonces SET spent_at = now()
            WHERE app_id = $1 AND nonce_hash = $2 AND spent_at IS NULL AND expires_at > now() RETURNING 1
            """, [appId, PGParam.bytea(hash)]).isEmpty
    }
}
