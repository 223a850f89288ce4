/// An app's SMS settings (`app_sms_settings`): the SMS-pumping policy the token worker applies
/// and the Twilio-compatible account the mailer sends through. No row: nothing allowed, the
/// default breaker, the mailer's own account (IDENTITY_SMS_*).
public struct SmsSettings: Sendable, Equatable {
    /// Calling codes (33, 1, 44…) numbers may be sent to. Empty: no SMS at all, so a fresh app
    /// cannot be billed by strangers.
    public var allowedCallingCodes: [Int] = []
    /// Sends an hour past which the breaker opens (for an hour): see `SmsPolicy`.
    public var breakerHourly: Int = SmsSettings.defaultBreakerHourly
    public var apiURL: String?
    public var accountSid: String?
    public var fromNumber: String?
    public var messagingServiceSid: String?
    /// Whether a sealed auth token is stored (the token worker never reads it back).
    public var authTokenSet = false

    public static let defaultBreakerHourly = 3000

    /// Whether the mailer texts through the app's own account (its sid and a sealed token, as
    /// `SmsSettingsStore.account(appId:)` finds it, in IdentityCredentials), so the app, not the operator, pays: otherwise its texts go
    /// out on the operator's shared account and only the operator's calling codes may be sent.
    public var usesOwnAccount: Bool { accountSid != nil && authTokenSet }

    public init() {}
}
