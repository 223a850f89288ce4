import IdentityKit

/// Creating an app (identityctl, tests): its app key, its first secret key (only the hash is
/// stored) and its first signing key (RS256 unless asked otherwise), whose private half is
/// stored sealed under the master key's signing-key sub-key.
extension AppStore {
    public struct CreatedApp: Sendable {
        public let app: AppRecord
        public let secretKey: String
    }

    public func create(name: String, accessTokenTTL: Int, publicBaseURL: String, masterKey: [UInt8],
                       algorithm: SigningAlgorithm = .rs256) throws -> CreatedApp {
        let appId = Identifiers.prefixed("app")
        let appKey = Identifiers.secret("ak")
        let secretKey = Identifiers.secret("sk")
        let issuer = publicBaseURL.trimmingSuffix("/") + "/v1/apps/" + appId
        let key = try TokenSigningKey.generate(algorithm)
        let kid = Identifiers.prefixed("key")
        let sealed = try SecretSealer(masterKey: masterKey, purpose: .signingKeySeal)
            .seal(Array(try key.privateKeyPEM().utf8), associatedData: SigningKeyAAD.make(appId: appId, kid: kid))
        try pool.transaction { connection in
            try connection.query("""
                INSERT INTO apps (id, name, app_key, secret_key_hash, issuer, access_token_ttl)
                VALUES ($1, $2, $3, $4, $5, $6)
                """, [appId, name, appKey, PGParam.bytea(Digest.sha256(secretKey)), issuer, String(accessTokenTTL)])
            // The key the app starts with (app_secret_keys holds every key; apps.secret_key_hash
            // keeps the first one, as before migration 0012).
            try connection.query("INSERT INTO app_secret_keys (app_id, id, key_hash) VALUES ($1, $2, $3)",
                                 [appId, Identifiers.prefixed("skid"), PGParam.bytea(Digest.sha256(secretKey))])
            try connection.query("""
                INSERT INTO signing_keys (app_id, kid, alg, public_pem, private_key_enc, status)
                VALUES ($1, $2, $3, $4, $5, 'current')
                """, [appId, kid, algorithm.rawValue, try key.publicKeyPEM(), PGParam.bytea(sealed)])
        }
        let app = AppRecord(id: appId, name: name, appKey: appKey, issuer: issuer, accessTokenTTL: accessTokenTTL)
        return CreatedApp(app: app, secretKey: secretKey)
    }
}

/// Binds a sealed private key to its row, so a sealed value moved to another row fails to open.
enum SigningKeyAAD {
    static func make(appId: String, kid: String) -> [UInt8] { Array("signing_key:\(appId):\(kid)".utf8) }
}

extension String {
    func trimmingSuffix(_ suffix: String) -> String {
        var result = self
        while result.hasSuffix(suffix) { result.removeLast(suffix.count) }
        return result
    }
}
