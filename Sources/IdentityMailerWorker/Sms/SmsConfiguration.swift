import Foundation
import IdentityKit

/// The SMS channel's settings (docs/operations.md, "Configuration"): the worker's own Twilio-compatible
/// account for apps that set none (`IDENTITY_SMS_ACCOUNT_SID`, `IDENTITY_SMS_AUTH_TOKEN`, and
/// `IDENTITY_SMS_FROM` or `IDENTITY_SMS_MESSAGING_SERVICE_SID`; `IDENTITY_SMS_API_URL` for
/// another provider or a stand-in). Without an account, and for apps without their own, each
/// SMS is written as a `.sms` file under `IDENTITY_SMS_DIR` (default: the mail directory).
public struct SmsConfiguration: Sendable {
    var account: TwilioTransport.Account?
    var apiURL: String
    var timeoutMilliseconds: Int
    var directory: String

    static func read(_ env: inout EnvironmentReader, mailDirectory: String) -> SmsConfiguration {
        let apiURL = env.string("IDENTITY_SMS_API_URL", default: "https://api.twilio.com")
        if URL(string: apiURL)?.scheme.map({ ["http", "https"].contains($0) }) != true {
            env.fail("IDENTITY_SMS_API_URL=\(apiURL) must be an http(s) URL")
        }
        var account: TwilioTransport.Account?
        if let sid = env.raw("IDENTITY_SMS_ACCOUNT_SID") {
            guard let token = env.secret("IDENTITY_SMS_AUTH_TOKEN") else {
                env.fail("IDENTITY_SMS_ACCOUNT_SID is set: IDENTITY_SMS_AUTH_TOKEN is required too")
                return SmsConfiguration(account: nil, apiURL: apiURL, timeoutMilliseconds: 10_000, directory: mailDirectory)
            }
            let from = env.raw("IDENTITY_SMS_FROM")
            let service = env.raw("IDENTITY_SMS_MESSAGING_SERVICE_SID")
            if from == nil && service == nil {
                env.fail("IDENTITY_SMS_ACCOUNT_SID is set: IDENTITY_SMS_FROM or IDENTITY_SMS_MESSAGING_SERVICE_SID is required")
            }
            account = .init(apiURL: apiURL, accountSid: sid, authToken: token, from: from, messagingServiceSid: service)
        }
        return SmsConfiguration(account: account, apiURL: apiURL,
                                timeoutMilliseconds: env.int("IDENTITY_SMS_TIMEOUT_MS", default: 10_000, range: 100...120_000),
                                directory: env.string("IDENTITY_SMS_DIR", default: mailDirectory))
    }
}
