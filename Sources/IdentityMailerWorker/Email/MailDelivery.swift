import Foundation
import IdentityCredentials
import IdentityKit
import IdentityOutbound

/// The email channel: one delivery attempt of a `SendEmail` and what follows it (nothing, a
/// retry, or a dead letter).
struct MailDelivery: Sendable {
    /// Opens the sealed code (the code never travels or rests in clear on the broker).
    let seal: MailPayloadSeal
    let apps: AppStore
    let settings: MailSettingsStore
    let ledger: DeliveryLedger
    let transport: MailTransport
    let defaultFromName: String?
    let defaultFromAddress: String
    let queues: ChannelQueues
    let counters: Locked<MailerWorker.Counters>
    /// The app's `send_email` hook, offered the message first.
    let hook: SendHook

    func handle(_ command: MailerV1.SendEmail) -> [OutgoingMessage] {
        let fields = ["message_id": command.messageId, "app_id": command.appId, "kind": command.kind]
        do {
            guard try !ledger.isUndeliverable(appId: command.appId, email: command.to) else {
                ServiceMetrics.deliveries.inc("email", "undeliverable")
                Log.info("address does not forward (Apple); not sent", fields)
                return []
            }
            guard try ledger.claim(messageId: command.messageId, appId: command.appId) else {
                counters.withLock { $0.duplicatesDropped += 1 }
                ServiceMetrics.deliveries.inc("email", "duplicate")
                Log.info("mail already sent or being sent; dropped", fields)
                return []
            }
            let message = try render(command)
            switch hook.offer(appId: command.appId, kind: .sendEmail, payload: message.hookPayload) {
            case .sentByApp:
                try ledger.markSent(messageId: command.messageId)
                counters.withLock { $0.sent += 1 }
                ServiceMetrics.deliveries.inc("email", "sent_by_app")
                Log.info("mail handed to the app's send_email hook", fields)
                return []
            case .failed(let reason):
                try? ledger.release(messageId: command.messageId)
                return failed(command, .transient(reason), fields)
            case .ownSending:
                break
            }
            do {
                try transport.deliver(from: message.from, to: command.to, message: message.mime, messageId: command.messageId)
            } catch {
                try? ledger.release(messageId: command.messageId)
                return failed(command, error, fields)
            }
            try ledger.markSent(messageId: command.messageId)
            counters.withLock { $0.sent += 1 }
            ServiceMetrics.deliveries.inc("email", "sent")
            Log.info("mail sent", fields)
            return []
        } catch {
            // The store or the app's settings could not be read: try again later.
            try? ledger.release(messageId: command.messageId)
            return failed(command, .transient(String(describing: error)), fields)
        }
    }

    /// A message ready to send, and what the app's `send_email` hook is given of it.
    struct Rendered {
        let from: String
        let mime: String
        let hookPayload: [String: JSONValue]
    }

    private func render(_ sent: MailerV1.SendEmail) throws -> Rendered {
        var command = sent
        if !sent.sealedCode.isEmpty {
            command.code = try seal.open(Array(sent.sealedCode), messageId: sent.messageId)
        }
        let app = try apps.find(id: command.appId)
        let mail = try settings.settings(appId: command.appId)
        var link = command.link ?? ""
        if link.isEmpty, let mode = MailRenderer.linkModes[command.kind], let deepLink = mail.deepLinkURL, !deepLink.isEmpty {
            link = mode == "sign_in"
                ? MailRenderer.magicLink(deepLink: deepLink, email: command.to, code: command.code)
                : MailRenderer.actionLink(deepLink: deepLink, mode: mode, email: command.to, code: command.code)
        }
        var values = [
            "app_name": app?.name ?? "your app", "code": command.code, "link": link, "email": command.to,
        ]
        for value in command.values where MailRenderer.extraPlaceholders.contains(value.name) { values[value.name] = value.value }
        let templates = MessageTemplates(overrides: mail.templates, defaultLanguage: mail.defaultLocale)
        let language = templates.language(kind: command.kind, preferences: command.languages)
        let rendered = MailRenderer().render(kind: command.kind, templates: templates, language: language, values: values)
        // The app's own sender when it set an address, else the worker's default sender.
        let (fromName, fromAddress) = mail.fromAddress.map { (mail.fromName, $0) }
            ?? (mail.fromName ?? defaultFromName, defaultFromAddress)
        let payload: [String: JSONValue] = [
            "app_id": .string(command.appId), "message_id": .string(command.messageId), "kind": .string(command.kind),
            "language": .string(language), "to": .string(command.to), "subject": .string(rendered.subject),
            "text": .string(rendered.text), "html": .string(rendered.html),
            "code": command.code.isEmpty ? .null : .string(command.code), "link": link.isEmpty ? .null : .string(link),
        ]
        return Rendered(from: fromAddress, mime: MIMEMessage.build(fromName: fromName, fromAddress: fromAddress,
                                                                   to: command.to, subject: rendered.subject,
                                                                   text: rendered.text, html: rendered.html,
                                                                   messageId: command.messageId, kind: command.kind,
                                                                   language: language),
                        hookPayload: payload)
    }

    private func failed(_ command: MailerV1.SendEmail, _ failure: SMTPClient.Failure,
                        _ fields: [String: String]) -> [OutgoingMessage] {
        var next = command
        next.attempt += 1
        let reason: ChannelQueues.Failure
        switch failure {
        case .transient(let text): reason = .transient(text)
        case .permanent(let text): reason = .permanent(text)
        }
        return queues.afterFailure(next, messageId: command.messageId, appId: command.appId, attempt: Int(command.attempt),
                                   failure: reason, counters: counters, fields: fields).map { [$0] } ?? []
    }
}
