import Foundation
import IdentityCredentials
import IdentityKit
import IdentityOutbound

/// Settings of `identity-mailer-worker`. Without `IDENTITY_SMTP_HOST` mail is written as
/// `.eml` files under `IDENTITY_MAIL_DIR` (the dev transport), so `make run` needs no server.
public struct MailerWorkerConfiguration: Sendable {
    public var common: CommonConfiguration
    public var concurrency: Int
    /// The bounds on waiting for apps' `send_email` / `send_sms` hooks (`IDENTITY_HOOK_*`), one
    /// per process, shared by its channels.
    public var hooks = HookFairness(limits: .init())
    public var smtp: SMTPClient.Settings?
    public var mailDirectory: String
    public var defaultFromName: String?
    public var defaultFromAddress: String
    /// Delay before each retry of a failed delivery; after the last, the message is dead-lettered.
    public var retryDelaysMilliseconds: [Int]
    /// Opens the codes of mail commands (`MailPayloadSeal`): a sub-key of the master key, which
    /// mailer workers are not given.
    public var mailPayloadKey: [UInt8]
    /// The channels this worker consumes (`IDENTITY_MAILER_CHANNELS`), so each can be scaled apart.
    public var channels: [DeliveryChannel]
    public var push: PushConfiguration

    /// Where push notifications go and with what to open the apps' credentials.
    public struct PushConfiguration: Sendable {
        public var apnsURL = "https://api.push.apple.com"
        public var fcmURL = "https://fcm.googleapis.com"
        public var fcmTokenURL = "https://oauth2.googleapis.com/token"
        /// A CA bundle to trust instead of the system's (stand-ins in tests).
        public var caFile: String?
        public var timeoutMilliseconds = 10_000
        /// The push-credential sub-key (`identityctl keys push-credential-key`).
        public var credentialKey: [UInt8]?
    }

    /// The SMS channel (`SmsConfiguration`).
    public var sms: SmsConfiguration

    public static func fromEnvironment() -> MailerWorkerConfiguration {
        var env = EnvironmentReader()
        let concurrency = env.int("IDENTITY_WORKER_CONCURRENCY", default: 4, range: 1...256)
        var smtp: SMTPClient.Settings?
        if let host = env.raw("IDENTITY_SMTP_HOST") {
            let securityText = env.string("IDENTITY_SMTP_TLS", default: "starttls")
            let security = SMTPClient.Security(rawValue: securityText) ?? .starttls
            if SMTPClient.Security(rawValue: securityText) == nil {
                env.fail("IDENTITY_SMTP_TLS=\(securityText) must be starttls, implicit or none")
            }
            smtp = SMTPClient.Settings(
                host: host, port: env.int("IDENTITY_SMTP_PORT", default: security == .implicit ? 465 : 587, range: 1...65_535),
                security: security, username: env.raw("IDENTITY_SMTP_USERNAME"), password: env.secret("IDENTITY_SMTP_PASSWORD"),
                timeoutMilliseconds: env.int("IDENTITY_SMTP_TIMEOUT_MS", default: 10_000, range: 100...120_000))
        }
        let (fromName, fromAddress) = Self.parseSender(env.string("IDENTITY_MAIL_FROM", default: "Identity <no-reply@localhost>"))
        let delaysText = env.string("IDENTITY_MAIL_RETRY_DELAYS_MS", default: "5000,30000,120000,600000,1800000")
        let delays = delaysText.split(separator: ",").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
        if delays.isEmpty || delays.contains(where: { $0 < 1 }) {
            env.fail("IDENTITY_MAIL_RETRY_DELAYS_MS=\(delaysText) must be positive milliseconds, comma-separated")
        }
        // IDENTITY_MAIL_PAYLOAD_KEY (identityctl keys mail-payload-key prints it). Derived from
        // IDENTITY_MASTER_KEY only as a fallback, with a warning: mailer operators should not
        // hold the master key.
        var payloadKey = env.key32("IDENTITY_MAIL_PAYLOAD_KEY", required: false)
        if payloadKey == nil, (env.raw("IDENTITY_MASTER_KEY") ?? env.raw("IDENTITY_MASTER_KEY_FILE")) != nil {
            payloadKey = env.key32("IDENTITY_MASTER_KEY", required: true).map { MailPayloadSeal(masterKey: $0).keyBytes }
            Log.warning("mailer given IDENTITY_MASTER_KEY: give it IDENTITY_MAIL_PAYLOAD_KEY instead (least privilege)")
        }
        if payloadKey == nil {
            env.fail("IDENTITY_MAIL_PAYLOAD_KEY is required (64 hex characters: identityctl keys mail-payload-key)")
        }
        let mailDirectory = env.string("IDENTITY_MAIL_DIR", default: "mail-outbox")
        let sms = SmsConfiguration.read(&env, mailDirectory: mailDirectory)
        var channels: [DeliveryChannel] = []
        let channelsText = env.string("IDENTITY_MAILER_CHANNELS", default: DeliveryChannel.all.map(\.name).joined(separator: ","))
        for name in channelsText.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) where !name.isEmpty {
            if let channel = DeliveryChannel.named(name) { if !channels.contains(channel) { channels.append(channel) } } else {
                env.fail("IDENTITY_MAILER_CHANNELS=\(channelsText): unknown channel \(name) "
                         + "(known: \(DeliveryChannel.all.map(\.name).joined(separator: ", ")))")
            }
        }
        if channels.isEmpty { env.fail("IDENTITY_MAILER_CHANNELS names no channel") }
        var push = PushConfiguration()
        push.apnsURL = env.string("IDENTITY_APNS_URL", default: push.apnsURL)
        push.fcmURL = env.string("IDENTITY_FCM_URL", default: push.fcmURL)
        push.fcmTokenURL = env.string("IDENTITY_FCM_TOKEN_URL", default: push.fcmTokenURL)
        push.caFile = env.raw("IDENTITY_PUSH_CA_FILE")
        push.timeoutMilliseconds = env.int("IDENTITY_PUSH_TIMEOUT_MS", default: 10_000, range: 100...120_000)
        push.credentialKey = env.key32("IDENTITY_PUSH_CREDENTIAL_KEY", required: false)
        if push.credentialKey == nil, (env.raw("IDENTITY_MASTER_KEY") ?? env.raw("IDENTITY_MASTER_KEY_FILE")) != nil {
            push.credentialKey = env.key32("IDENTITY_MASTER_KEY", required: true).map { SubKey.pushCredentialSeal.derive(from: $0) }
        }
        if push.credentialKey == nil, channels.contains(.push) {
            Log.warning("no IDENTITY_PUSH_CREDENTIAL_KEY: push messages will be dead-lettered "
                        + "(identityctl keys push-credential-key prints it)")
        }
        let hookLimits = HookFairness.Limits.fromEnvironment(&env)
        var config = MailerWorkerConfiguration(
            common: CommonConfiguration(reading: &env, defaultPoolSize: concurrency), concurrency: concurrency,
            smtp: smtp, mailDirectory: mailDirectory,
            defaultFromName: fromName, defaultFromAddress: fromAddress, retryDelaysMilliseconds: delays,
            mailPayloadKey: payloadKey ?? [], channels: channels, push: push, sms: sms)
        config.hooks = HookFairness(limits: hookLimits)
        env.validateOrExit(program: "identity-mailer-worker")
        return config
    }

    /// `Name <address>` or a bare address.
    static func parseSender(_ value: String) -> (String?, String) {
        guard let open = value.lastIndex(of: "<"), let close = value.lastIndex(of: ">"), open < close else {
            return (nil, value.trimmingCharacters(in: .whitespaces))
        }
        let name = value[..<open].trimmingCharacters(in: .whitespaces)
        return (name.isEmpty ? nil : name, String(value[value.index(after: open)..<close]))
    }
}
