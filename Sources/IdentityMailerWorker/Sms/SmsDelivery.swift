import Foundation
import IdentityCredentials
import IdentityKit
import IdentityOutbound

/// The SMS channel (`identity.mailer.sms`): opens the sealed code, writes the text, picks the
/// account (the app's own, else the worker's `IDENTITY_SMS_*`, else the dev file transport)
/// and sends it once (the delivery ledger); a failure is retried or dead-lettered through
/// `ChannelQueues`, like every channel's.
struct SmsDelivery: Sendable {
    let seal: MailPayloadSeal
    let credentials: SmsCredentialSeal
    let apps: AppStore
    let settings: SmsSettingsStore
    /// The app's texts (`mail_templates` holds an SMS's overrides too) and default language.
    let texts: MailSettingsStore
    let ledger: DeliveryLedger
    /// The worker's own account (IDENTITY_SMS_*), for apps without one.
    let defaultAccount: TwilioTransport.Account?
    /// The API of apps that set an account but no URL (IDENTITY_SMS_API_URL).
    let defaultAPIURL: String
    let fileTransport: SmsFileTransport
    let http: OutboundHTTP
    /// Where an app's own `sms_api_url` may lead (IDENTITY_ALLOW_PRIVATE_OUTBOUND, …).
    let outbound: OutboundAddressPolicy
    let queues: ChannelQueues
    let counters: Locked<MailerWorker.Counters>
    /// The app's `send_sms` hook, offered the text first.
    let hook: SendHook

    func handle(_ command: MailerV1.SendSms) -> [OutgoingMessage] {
        // Never the number: the logs hold no phone number.
        let fields = ["message_id": command.messageId, "app_id": command.appId, "kind": command.kind]
        do {
            guard try ledger.claim(messageId: command.messageId, appId: command.appId) else {
                counters.withLock { $0.duplicatesDropped += 1 }
                ServiceMetrics.deliveries.inc("sms", "duplicate")
                Log.info("sms already sent or being sent; dropped", fields)
                return []
            }
        } catch {
            return failed(command, .transient(String(describing: error)), fields)
        }
        do throws(ChannelQueues.Failure) {
            let (transport, text, language) = try prepare(command)
            let payload: [String: JSONValue] = [
                "app_id": .string(command.appId), "message_id": .string(command.messageId), "kind": .string(command.kind),
                "language": .string(language), "to": .string(command.to), "text": .string(text),
            ]
            switch hook.offer(appId: command.appId, kind: .sendSms, payload: payload) {
            case .sentByApp:
                try? ledger.markSent(messageId: command.messageId)
                counters.withLock { $0.sent += 1 }
                ServiceMetrics.deliveries.inc("sms", "sent_by_app")
                Log.info("sms handed to the app's send_sms hook", fields)
                return []
            case .failed(let reason):
                throw .transient(reason)
            case .ownSending:
                break
            }
            try transport.deliver(to: command.to, body: text, messageId: command.messageId)
            // What the bill counts: the segments of the text, by the encoding it needs.
            let segments = SmsSegments(text)
            ServiceMetrics.smsSegments.inc(segments.encoding.rawValue, by: Double(segments.count))
        } catch {
            try? ledger.release(messageId: command.messageId)
            return failed(command, error, fields)
        }
        // Sent: a failure to record it only risks a duplicate on redelivery, never a loss.
        try? ledger.markSent(messageId: command.messageId)
        counters.withLock { $0.sent += 1 }
        ServiceMetrics.deliveries.inc("sms", "sent")
        Log.info("sms sent", fields)
        return []
    }

    private func prepare(_ command: MailerV1.SendSms) throws(ChannelQueues.Failure) -> (SmsTransport, String, String) {
        do {
            let code = try seal.open(Array(command.sealedCode), messageId: command.messageId)
            let appName = try apps.find(id: command.appId)?.name ?? "your app"
            let mail = try texts.settings(appId: command.appId)
            let templates = MessageTemplates(overrides: mail.templates, defaultLanguage: mail.defaultLocale)
            let language = templates.language(kind: command.kind, preferences: command.languages)
            let text = MailRenderer().renderSms(kind: command.kind, templates: templates, language: language,
                                                values: ["app_name": appName, "code": code])
            return (try transport(appId: command.appId), text, language)
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
                                   http: http, policy: own.apiURL == nil ? nil : outbound)
        }
        if let defaultAccount { return TwilioTransport(account: defaultAccount, http: http) }
        return fileTransport
    }

    private func failed(_ command: MailerV1.SendSms, _ failure: ChannelQueues.Failure,
                        _ fields: [String: String]) -> [OutgoingMessage] {
        var next = command
        next.attempt += 1
        return queues.afterFailure(next, messageId: command.messageId, appId: command.appId, attempt: Int(command.attempt),
                                   failure: failure, counters: counters, fields: fields).map { [$0] } ?? []
    }
}

extension SmsDelivery {
    /// The SMS channel's delivery, from the worker's configuration (`IDENTITY_SMS_*`).
    static func make(configuration: MailerWorkerConfiguration, pool: PGPool, queues: ChannelQueues,
                     counters: Locked<MailerWorker.Counters>) -> SmsDelivery {
        let sms = configuration.sms
        if sms.account == nil {
            Log.info("no IDENTITY_SMS_ACCOUNT_SID: SMS of apps without an account are written as .sms files",
                     ["directory": sms.directory])
        }
        return SmsDelivery(seal: MailPayloadSeal(key: configuration.mailPayloadKey),
                           credentials: SmsCredentialSeal(mailPayloadKey: configuration.mailPayloadKey),
                           apps: AppStore(pool: pool), settings: SmsSettingsStore(pool: pool), texts: MailSettingsStore(pool: pool),
                           ledger: DeliveryLedger(pool: pool), defaultAccount: sms.account, defaultAPIURL: sms.apiURL,
                           fileTransport: SmsFileTransport(directory: sms.directory),
                           http: OutboundHTTP(timeoutMilliseconds: sms.timeoutMilliseconds),
                           outbound: configuration.common.outboundAddresses, queues: queues, counters: counters,
                           hook: SendHook.make(configuration: configuration, pool: pool))
    }
}
