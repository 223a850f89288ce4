import IdentityKit

/// Rows sealed before every key became a sub-key of the master key (`SubKey`) were sealed with
/// the master key itself. `identityctl keys reseal` (run by `make run` after `migrate`, and by
/// an operator once after upgrading) opens each such row with the master key and seals it again
/// under its sub-key, in one transaction per table. It is the only code that still uses the master
/// key as a cipher key, and only to read what the old code wrote; a row that opens under its
/// sub-key already is left alone, so running it again changes nothing.
public struct LegacySealUpgrade: Sendable {
    let pool: PGPool
    let masterKey: [UInt8]

    public init(pool: PGPool, masterKey: [UInt8]) {
        self.pool = pool
        self.masterKey = masterKey
    }

    public struct Counts: Sendable, Equatable {
        public var signingKeys = 0
        public var applePrivateKeys = 0
        public var appleRefreshTokens = 0
    }

    /// Reseals every legacy row; returns how many of each kind were resealed.
    public func run() throws -> Counts {
        var counts = Counts()
        counts.signingKeys = try reseal(
            select: "SELECT app_id, kid, private_key_enc AS sealed FROM signing_keys WHERE private_key_enc IS NOT NULL",
            update: "UPDATE signing_keys SET private_key_enc = $3 WHERE app_id = $1 AND kid = $2",
            purpose: .signingKeySeal,
            keys: { [try $0.string("app_id"), try $0.string("kid")] },
            associatedData: { SigningKeyAAD.make(appId: $0[0], kid: $0[1]) })
        counts.applePrivateKeys = try reseal(
            select: """
                SELECT app_id, apple_private_key_enc AS sealed FROM app_provider_settings
                WHERE apple_private_key_enc IS NOT NULL
                """,
            update: "UPDATE app_provider_settings SET apple_private_key_enc = $2 WHERE app_id = $1",
            purpose: .appleSecretSeal,
            keys: { [try $0.string("app_id")] },
            associatedData: { ProviderSecretAAD.applePrivateKey(appId: $0[0]) })
        counts.appleRefreshTokens = try reseal(
            select: """
                SELECT app_id, provider, subject, apple_refresh_token_enc AS sealed FROM user_identities
                WHERE apple_refresh_token_enc IS NOT NULL
                """,
            update: """
                UPDATE user_identities SET apple_refresh_token_enc = $4
                WHERE app_id = $1 AND provider = $2 AND subject = $3
                """,
            purpose: .appleSecretSeal,
            keys: { [try $0.string("app_id"), try $0.string("provider"), try $0.string("subject")] },
            associatedData: { ProviderSecretAAD.appleRefreshToken(appId: $0[0], subject: $0[2]) })
        return counts
    }

    private func reseal(select: String, update: String, purpose: SubKey,
                        keys: (PGRow) throws -> [String], associatedData: ([String]) -> [UInt8]) throws -> Int {
        let sealer = SecretSealer(masterKey: masterKey, purpose: purpose)
        return try pool.transaction { connection in
            var resealed = 0
            for row in try connection.query(select + " FOR UPDATE", []) {
                let key = try keys(row)
                let sealed = try row.bytes("sealed")
                let aad = associatedData(key)
                if (try? sealer.open(sealed, associatedData: aad)) != nil { continue }
                // Not under its sub-key: it must open under the master key (the old way), or the
                // row is damaged or sealed by another master key, which is worth stopping for.
                let plaintext = try AESGCM.open(sealed, key: masterKey, associatedData: aad)
                try connection.query(update, key.map { Optional($0) } + [PGParam.bytea(try sealer.seal(plaintext, associatedData: aad))])
                resealed += 1
            }
            return resealed
        }
    }
}
