import Foundation
import IdentityKit

/// An app's push credentials and whether it sends security alerts (`app_push_settings`). The
/// secrets are sealed under `SubKey.pushCredentialSeal`, bound to the app and the field
/// (`PushSecretAAD`); only the mailer's role may read the sealed columns.
public struct PushSettings: Sendable, Equatable {
    public var apnsTeamId: String?
    public var apnsKeyId: String?
    /// The app's bundle id, APNs' `apns-topic`.
    public var apnsTopic: String?
    public var apnsPrivateKeySealed: [UInt8]?
    public var apnsPrivateKeySet = false
    public var fcmProjectId: String?
    public var fcmServiceAccountSealed: [UInt8]?
    public var fcmServiceAccountSet = false
    /// On unless the app turns them off (migration 0030).
    public var securityAlerts = true

    public init() {}
}

public enum PushSecretAAD {
    public static func apnsPrivateKey(appId: String) -> [UInt8] { Array("apns_p8:\(appId)".utf8) }
    public static func fcmServiceAccount(appId: String) -> [UInt8] { Array("fcm_service_account:\(appId)".utf8) }
}

public struct PushSettingsStore: Sendable {
    let pool: PGPool

    public init(pool: PGPool) { self.pool = pool }

    private static let publicColumns = """
        apns_team_id, apns_key_id, apns_topic, apns_private_key_set, fcm_project_id, fcm_service_account_set, \
        security_alerts
        """

    /// Everything but the sealed secrets (the token worker and identityctl may read this).
    public func settings(appId: String, on connection: PGConnection? = nil) throws -> PushSettings {
        try read(appId: appId, columns: Self.publicColumns, on: connection)
    }

    /// With the sealed secrets: the mailer's read.
    public func settingsWithSecrets(appId: String) throws -> PushSettings {
        try read(appId: appId, columns: Self.publicColumns + ", apns_private_key_enc, fcm_service_account_enc", on: nil)
    }

    private func read(appId: String, columns: String, on connection: PGConnection?) throws -> PushSettings {
        let sql = "SELECT \(columns) FROM app_push_settings WHERE app_id = $1"
        let row = try connection.map { try $0.query(sql, [appId]).first }
            ?? pool.withConnection { try $0.query(sql, [appId]).first }
        var settings = PushSettings()
        guard let row else { return settings }
        settings.apnsTeamId = try row.optionalString("apns_team_id")
        settings.apnsKeyId = try row.optionalString("apns_key_id")
        settings.apnsTopic = try row.optionalString("apns_topic")
        settings.apnsPrivateKeySet = try row.bool("apns_private_key_set")
        settings.fcmProjectId = try row.optionalString("fcm_project_id")
        settings.fcmServiceAccountSet = try row.bool("fcm_service_account_set")
        settings.securityAlerts = try row.bool("security_alerts")
        if columns.contains("apns_private_key_enc") {
            settings.apnsPrivateKeySealed = try row.optionalBytes("apns_private_key_enc")
            settings.fcmServiceAccountSealed = try row.optionalBytes("fcm_service_account_enc")
        }
        return settings
    }

    /// Writes the public fields; a sealed secret only when given (nil keeps the stored one).
    public func save(appId: String, _ settings: PushSettings, sealedAPNsKey: [UInt8]?,
                     sealedFCMServiceAccount: [UInt8]?) throws {
        try pool.withConnection { connection in
            try connection.query("""
                INSERT INTO app_push_settings (app_id, apns_team_id, apns_key_id, apns_topic, fcm_project_id, security_alerts)
                VALUES ($1, $2, $3, $4, $5, $6)
                ON CONFLICT (app_id) DO UPDATE SET apns_team_id = EXCLUDED.apns_team_id,
                    apns_key_id = EXCLUDED.apns_key_id, apns_topic = EXCLUDED.apns_topic,
                    fcm_project_id = EXCLUDED.fcm_project_id, security_alerts = EXCLUDED.security_alerts,
                    updated_at = now()
                """, [appId, settings.apnsTeamId, settings.apnsKeyId, settings.apnsTopic, settings.fcmProjectId,
                      PGParam.bool(settings.securityAlerts)])
            if let sealedAPNsKey {
                try connection.query("UPDATE app_push_settings SET apns_private_key_enc = $2 WHERE app_id = $1",
                                     [appId, PGParam.bytea(sealedAPNsKey)])
            }
            if let sealedFCMServiceAccount {
                try connection.query("UPDATE app_push_settings SET fcm_service_account_enc = $2 WHERE app_id = $1",
                                     [appId, PGParam.bytea(sealedFCMServiceAccount)])
            }
        }
    }
}
