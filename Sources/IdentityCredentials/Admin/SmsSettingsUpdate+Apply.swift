import IdentityKit

/// Writing the SMS part of an update: the auth token sealed (`SmsCredentialSeal`) and stored,
/// the settings answered with the token only as set or not.
extension SmsSettingsUpdate {
    /// Writes the update (checked by `AppSettingsUpdate.apply` first).
    func apply(appId: String, pool: PGPool, masterKey: [UInt8]?) throws {
        guard !isEmpty else { return }
        let store = SmsSettingsStore(pool: pool)
        var settings = try store.settings(appId: appId)
        if let codes = allowedCallingCodes { settings.allowedCallingCodes = Array(Set(codes)).sorted() }
        if let hourly = breakerHourly { settings.breakerHourly = hourly }
        let cleared = { (value: String) -> String? in value.isEmpty ? nil : value }
        if let url = apiURL { settings.apiURL = cleared(url) }
        if let sid = accountSid { settings.accountSid = cleared(sid) }
        if let from = fromNumber { settings.fromNumber = cleared(from).map { PhoneNumber.normalize($0) ?? $0 } }
        if let service = messagingServiceSid { settings.messagingServiceSid = cleared(service) }
        var sealed: [UInt8]?
        if let token = authToken {
            if token.isEmpty {
                sealed = []
            } else {
                guard let masterKey, masterKey.count == 32 else {
                    throw ServiceError(code: "auth/internal", status: 500, detail: "The master key is needed to seal the token.")
                }
                sealed = try SmsCredentialSeal(masterKey: masterKey).seal(token, appId: appId)
            }
        }
        try store.save(appId: appId, settings, sealedAuthToken: sealed)
    }

    /// The settings as the API and identityctl show them (the auth token only as set or not).
    static func summary(appId: String, pool: PGPool) throws -> [String: JSONValue] {
        let settings = try SmsSettingsStore(pool: pool).settings(appId: appId)
        return [
            "sms_allowed_calling_codes": .array(settings.allowedCallingCodes.map { JSONValue($0) }),
            "sms_breaker_hourly": JSONValue(settings.breakerHourly),
            "sms_api_url": JSONValue(settings.apiURL),
            "sms_account_sid": JSONValue(settings.accountSid),
            "sms_auth_token_set": .bool(settings.authTokenSet),
            "sms_from": JSONValue(settings.fromNumber),
            "sms_messaging_service_sid": JSONValue(settings.messagingServiceSid),
        ]
    }
}
