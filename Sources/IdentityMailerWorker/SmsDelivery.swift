import Foundation
import IdentityKit
import IdentityOutbound

/// The SMS channel (`identity.mailer.sms`): opens the sealed code, writes the text, picks the
/// account (the app's own, else the worker's `IDENTITY_SMS_*`, else the dev file transport)
/// and sends through `DeliveryChannel`, which owns retries, dead letters and the ledger.
struct SmsDelivery: Sendable {
    let channel: DeliveryChannel
    let seal: MailPayloadSeal
    let credentials: SmsCredentialSeal
    let apps: AppStore
    let settings: SmsSettingsStore
    /// The worker's own account (IDENTITY_SMS_*), for apps without one.
    let defaultAccount: TwilioTransport.Account?
    /// The API of apps that set an account but no URL (IDENTITY_SMS_API_URL).
    let defaultAPIURL: String
    let fileTransport: SmsFileTransport
    let http: OutboundHTTP

    static let texts = [
        "phone_code": "{{code}} is your {{app_name}} sign-in code. It expires in 10 minutes.",
        "phone_link": "{{code}} is your {{app_name}} code to add this phone. It expires in 10 minutes.",
    ]

    func handle(_ command: MailerV1.SendSms) -> [OutgoingMessage] {
        let fields = ["message_id": command.messageId, "app_id": command.appId, "kind": command.kind]
        return channel.attempt(command, messageId: command.messageId, appId: command.appId, attempt: Int(command.attempt),
                               fields: fields, nextAttempt: { var next = $0; next.attempt += 1; return next }) {
            () throws(DeliveryChannel.Failure) in
            let (transport, text) = try prepare(command)
            try transport.deliver(to: command.to, body: text, messageId: command.messageId)
        }
    }

    private func prepare(_ command: MailerV1.SendSms) throws(DeliveryChannel.Failure) -> (SmsTransport, String) {
        do {
            let code = try seal.open(Array(command.sealedCode), messageId: command.messageId)
            let appName = try apps.find(id: command.appId)?.name ?? "your app"
            let template = Self.texts[command.kind] ?? "{{code}}"
            let text = template.replacingOccurrences(of: "{{app_name}}", with: appName)
                .replacingOccurrences(of: "{{code}}", with: code)
            return (try transport(appId: command.appId), text)
        } catch let failure as DeliveryChannel.Failure {
            throw failure
        } catch {
            // The store could not be read, or a key is wrong: try again later (dead letter last).
            throw .transient(String(describing: error))
        }
    }

    private func transport(appId: String) throws -> SmsTransport {
        if let own = try settings.account(appId: appId) {
            let token = try credentials.open(own.sealedAuthToken, appId: appId)
            return TwilioTransport(account: .init(apiURL: own.apiURL ?? defaultAPIURL,
                                                  accountSid: own.accountSid, authToken: token,
                                                  from: own.fromNumber, messagingServiceSid: own.messagingServiceSid),
                                   http: http)
        }
        if let defaultAccount { return TwilioTransport(account: defaultAccount, http: http) }
        return fileTransport
    }
}

extension SmsDelivery {
    /// The SMS channel's consumer, with the mail channel's retry delays.
    static func consumer(configuration: MailerWorkerConfiguration, pool: PGPool,
                         counters: Locked<MailerWorker.Counters>) throws -> CommandConsumer {
        let channel = DeliveryChannel(name: "sms", queue: BusTopology.mailerSms, deadQueue: BusTopology.mailerSmsDead,
                                      retryQueue: BusTopology.mailerSmsRetry,
                                      retryDelays: configuration.retryDelaysMilliseconds,
                                      ledger: DeliveryLedger(pool: pool), counters: counters)
        let sms = configuration.sms
        if sms.account == nil {
            Log.info("no IDENTITY_SMS_ACCOUNT_SID: SMS of apps without an account are written as .sms files",
                     ["directory": sms.directory])
        }
        let delivery = SmsDelivery(channel: channel, seal: MailPayloadSeal(key: configuration.mailPayloadKey),
                                   credentials: SmsCredentialSeal(mailPayloadKey: configuration.mailPayloadKey),
                                   apps: AppStore(pool: pool), settings: SmsSettingsStore(pool: pool),
                                   defaultAccount: sms.account, defaultAPIURL: sms.apiURL, fileTransport: SmsFileTransport(directory: sms.directory),
                                   http: OutboundHTTP(timeoutMilliseconds: sms.timeoutMilliseconds))
        return try CommandConsumer(url: configuration.common.amqpURL,
                                   heartbeatSeconds: configuration.common.amqpHeartbeatSeconds,
                                   queue: BusTopology.mailerSms, name: "mailer-sms",
                                   concurrency: configuration.concurrency, setup: channel.declare) { message in
            guard message.type == MailerV1.SendSms.protoName,
                  let command = try? ProtoJSON.decode(MailerV1.SendSms.self, from: message.body) else {
                Log.warning("mailer sms: dropping a message it cannot read", ["type": message.type])
                return .none()
            }
            return .none(followUps: delivery.handle(command))
        }
    }
}
