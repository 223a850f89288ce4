import IdentityKit

/// An app's sign-in provider settings. The Apple `.p8` key is kept sealed; only the provider
/// worker (which has the master key) opens it.
public struct ProviderSettings: Sendable, Equatable {
    public var googleClientIds: [String] = []
    public var appleBundleIds: [String] = []
    public var appleServicesIds: [String] = []
    public var appleTeamId: String?
    public var appleKeyId: String?
    public var applePrivateKeySealed: [UInt8]?
    public var firebaseProjectId: String?
    /// Firebase's `email_verified` may link a sign-in to an existing account by email.
    public var firebaseTrustEmailVerified = false
    /// Apple nonces: `issued` by this service (GET /v1/auth/nonce), or made by the `client`
    /// (seed 000), then accepted once: remembered until the identity token expires.
    public var appleNonceFromClient = false
    /// `none` (seed 003's clients, which send Apple's identity token without a nonce): a token
    /// with no nonce is accepted, once — its own hash is remembered until it expires.
    public var appleNonceOptional = false

    /// `issued`, `client` or `none`, as stored.
    public var appleNonceMode: String { appleNonceOptional ? "none" : appleNonceFromClient ? "client" : "issued" }

    public init() {}

    /// Apple's accepted audiences: bundle ids (native) and services ids (web).
    public var appleClientIds: [String] { appleBundleIds + appleServicesIds }
}

public struct ProviderSettingsStore: Sendable {
    let pool: PGPool

    public init(pool: PGPool) { self.pool = pool }

    public func settings(appId: String) throws -> ProviderSettings {
        let row = try pool.withConnection { connection in
            try connection.query("""
                SELECT google_client_ids, apple_bundle_ids, apple_services_ids, apple_team_id, apple_key_id,
                       apple_private_key_enc, firebase_project_id, firebase_trust_email_verified, apple_nonce
                FROM app_provider_settings WHERE app_id = $1
                """, [appId]).first
        }
        var settings = ProviderSettings()
        guard let row else { return settings }
        settings.googleClientIds = try row.stringArray("google_client_ids")
        settings.appleBundleIds = try row.stringArray("apple_bundle_ids")
        settings.appleServicesIds = try row.stringArray("apple_services_ids")
        settings.appleTeamId = try row.optionalString("apple_team_id")
        settings.appleKeyId = try row.optionalString("apple_key_id")
        settings.applePrivateKeySealed = try row.optionalBytes("apple_private_key_enc")
        settings.firebaseProjectId = try row.optionalString("firebase_project_id")
        settings.firebaseTrustEmailVerified = try row.bool("firebase_trust_email_verified")
        let mode = try row.string("apple_nonce")
        settings.appleNonceFromClient = mode == "client" || mode == "none"
        settings.appleNonceOptional = mode == "none"
        return settings
    }

    /// The settings without the sealed `.p8` key, and whether one is stored: what settings
    /// changes read (`AppSettingsUpdate`), so the token worker that makes them needs no right
    /// to read a sealed key (the generated column `apple_private_key_set`, migration 0012).
    public func settingsWithoutKey(appId: String) throws -> (ProviderSettings, keySet: Bool) {
        let row = try pool.withConnection { connection in
            try connection.query("""
                SELECT google_client_ids, apple_bundle_ids, apple_services_ids, apple_team_id, apple_key_id,
                       apple_private_key_set, firebase_project_id, firebase_trust_email_verified
                FROM app_provider_settings WHERE app_id = $1
                """, [appId]).first
        }
        var settings = ProviderSettings()
        guard let row else { return (settings, false) }
        settings.googleClientIds = try row.stringArray("google_client_ids")
        settings.appleBundleIds = try row.stringArray("apple_bundle_ids")
        settings.appleServicesIds = try row.stringArray("apple_services_ids")
        settings.appleTeamId = try row.optionalString("apple_team_id")
        settings.appleKeyId = try row.optionalString("apple_key_id")
        settings.firebaseProjectId = try row.optionalString("firebase_project_id")
        settings.firebaseTrustEmailVerified = try row.bool("firebase_trust_email_verified")
        return (settings, try row.bool("apple_private_key_set"))
    }

    /// Saves every setting but the sealed key, which changes only when `sealedKey` is given:
    /// the stored key is neither read nor rewritten otherwise.
    public func saveKeepingKey(appId: String, _ settings: ProviderSettings, sealedKey: [UInt8]?) throws {
        try pool.transaction { connection in
            try connection.query("""
                INSERT INTO app_provider_settings (app_id, google_client_ids, apple_bundle_ids, apple_services_ids,
                    apple_team_id, apple_key_id, firebase_project_id, firebase_trust_email_verified, updated_at)
                VALUES ($1, $2, $3, $4, $5, $6, $7, $8, now())
                ON CONFLICT (app_id) DO UPDATE SET google_client_ids = EXCLUDED.google_client_ids,
                    apple_bundle_ids = EXCLUDED.apple_bundle_ids, apple_services_ids = EXCLUDED.apple_services_ids,
                    apple_team_id = EXCLUDED.apple_team_id, apple_key_id = EXCLUDED.apple_key_id,
                    firebase_project_id = EXCLUDED.firebase_project_id,
                    firebase_trust_email_verified = EXCLUDED.firebase_trust_email_verified, updated_at = now()
                """, [appId, PGParam.textArray(settings.googleClientIds), PGParam.textArray(settings.appleBundleIds),
                      PGParam.textArray(settings.appleServicesIds), settings.appleTeamId, settings.appleKeyId,
                      settings.firebaseProjectId, PGParam.bool(settings.firebaseTrustEmailVerified)])
            if let sealedKey {
                try connection.query("UPDATE app_provider_settings SET apple_private_key_enc = $2 WHERE app_id = $1",
                                     [appId, PGParam.bytea(sealedKey)])
            }
        }
    }

    /// Who makes Apple's nonce for the app (`apple_nonce`: `issued`, the default, `client`
    /// or `none`; docs/client-profiles.md, "App settings"). The row exists:
    /// `AppSettingsUpdate.apply` saved it first.
    public func setAppleNonceMode(appId: String, _ mode: String) throws {
        try pool.withConnection { connection in
            _ = try connection.query("UPDATE app_provider_settings SET apple_nonce = $2, updated_at = now() WHERE app_id = $1",
                                     [appId, mode])
        }
    }

    /// `issued`, `client` or `none` (read without touching the sealed key).
    public func appleNonceMode(appId: String) throws -> String {
        try pool.withConnection { connection in
            try connection.query("SELECT apple_nonce FROM app_provider_settings WHERE app_id = $1", [appId])
                .first.map { try $0.string("apple_nonce") } ?? "issued"
        }
    }

    public func save(appId: String, _ settings: ProviderSettings) throws {
        try pool.withConnection { connection in
            try connection.query("""
                INSERT INTO app_provider_settings (app_id, google_client_ids, apple_bundle_ids, apple_services_ids,
                    apple_team_id, apple_key_id, apple_private_key_enc, firebase_project_id,
                    firebase_trust_email_verified, apple_nonce, updated_at)
                VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, now())
                ON CONFLICT (app_id) DO UPDATE SET google_client_ids = EXCLUDED.google_client_ids,
                    apple_bundle_ids = EXCLUDED.apple_bundle_ids, apple_services_ids = EXCLUDED.apple_services_ids,
                    apple_team_id = EXCLUDED.apple_team_id, apple_key_id = EXCLUDED.apple_key_id,
                    apple_private_key_enc = EXCLUDED.apple_private_key_enc,
                    firebase_project_id = EXCLUDED.firebase_project_id,
                    firebase_trust_email_verified = EXCLUDED.firebase_trust_email_verified,
                    apple_nonce = EXCLUDED.apple_nonce, updated_at = now()
                """, [appId, PGParam.textArray(settings.googleClientIds), PGParam.textArray(settings.appleBundleIds),
                      PGParam.textArray(settings.appleServicesIds), settings.appleTeamId, settings.appleKeyId,
                      settings.applePrivateKeySealed.map(PGParam.bytea), settings.firebaseProjectId,
                      PGParam.bool(settings.firebaseTrustEmailVerified), settings.appleNonceMode])
        }
    }
}

/// Associated data binding sealed provider secrets to their owner.
public enum ProviderSecretAAD {
    public static func applePrivateKey(appId: String) -> [UInt8] { Array("apple_p8:\(appId)".utf8) }
    public static func appleCode(appId: String, subject: String) -> [UInt8] { Array("apple_code:\(appId):\(subject)".utf8) }
    public static func appleRefreshToken(appId: String, subject: String) -> [UInt8] {
        Array("apple_refresh:\(appId):\(subject)".utf8)
    }
}
