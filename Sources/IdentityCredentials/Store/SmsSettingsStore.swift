import Foundation
import IdentityKit

public struct SmsSettingsStore: Sendable {
    let pool: PGPool

    public init(pool: PGPool) { self.pool = pool }

    public func settings(appId: String) throws -> SmsSettings {
        try pool.withConnection { try settings(appId: appId, on: $0) }
    }

    public func settings(appId: String, on connection: PGConnection) throws -> SmsSettings {
        var settings = SmsSettings()
        guard let row = try connection.query("""
            SELECT array_to_string(allowed_calling_codes, ',') AS codes, breaker_hourly, api_url, account_sid,
                   from_number, messaging_service_sid, auth_token_set
            FROM app_sms_settings WHERE app_id = $1
            """, [appId]).first else { return settings }
        settings.allowedCallingCodes = try row.string("codes").split(separator: ",").compactMap { Int($0) }
        settings.breakerHourly = try row.int("breaker_hourly")
        settings.apiURL = try row.optionalString("api_url")
        settings.accountSid = try row.optionalString("account_sid")
        settings.fromNumber = try row.optionalString("from_number")
        settings.messagingServiceSid = try row.optionalString("messaging_service_sid")
        settings.authTokenSet = try row.bool("auth_token_set")
        return settings
    }

    /// Writes the settings; `sealedAuthToken` nil keeps the stored token, an empty array clears
    /// it. The stored token is never read here (the writers' roles have no SELECT on it).
    public func save(appId: String, _ settings: SmsSettings, sealedAuthToken: [UInt8]?) throws {
        let codes = "{" + settings.allowedCallingCodes.map(String.init).joined(separator: ",") + "}"
        try pool.transaction { connection in
            try connection.query("""
                INSERT INTO app_sms_settings (app_id, allowed_calling_codes, breaker_hourly, api_url, account_sid,
                                              from_number, messaging_service_sid, updated_at)
                VALUES ($1, $2::integer[], $3, $4, $5, $6, $7, now())
                ON CONFLICT (app_id) DO UPDATE SET allowed_calling_codes = EXCLUDED.allowed_calling_codes,
                    breaker_hourly = EXCLUDED.breaker_hourly, api_url = EXCLUDED.api_url,
                    account_sid = EXCLUDED.account_sid, from_number = EXCLUDED.from_number,
                    messaging_service_sid = EXCLUDED.messaging_service_sid, updated_at = now()
                """, [appId, codes, String(settings.breakerHourly), settings.apiURL, settings.accountSid,
                      settings.fromNumber, settings.messagingServiceSid])
            if let sealedAuthToken {
                try connection.query("UPDATE app_sms_settings SET auth_token_enc = $2::bytea WHERE app_id = $1",
                                     [appId, sealedAuthToken.isEmpty ? nil : PGParam.bytea(sealedAuthToken)])
            }
        }
    }

    /// The account the mailer sends an app's SMS through, its auth token still sealed; nil when
    /// the app has none of its own.
    public struct Account: Sendable {
        public let apiURL: String?
        public let accountSid: String
        public let sealedAuthToken: [UInt8]
        public let fromNumber: String?
        public let messagingServiceSid: String?
    }

    public func account(appId: String) throws -> Account? {
        try pool.withConnection { connection in
            guard let row = try connection.query("""
                SELECT api_url, account_sid, auth_token_enc, from_number, messaging_service_sid
                FROM app_sms_settings WHERE app_id = $1 AND account_sid IS NOT NULL AND auth_token_enc IS NOT NULL
                """, [appId]).first else { return nil }
            return Account(apiURL: try row.optionalString("api_url"), accountSid: try row.string("account_sid"),
                           sealedAuthToken: try row.bytes("auth_token_enc"), fromNumber: try row.optionalString("from_number"),
                           messagingServiceSid: try row.optionalString("messaging_service_sid"))
        }
    }
}
