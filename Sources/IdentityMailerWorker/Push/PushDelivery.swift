import Foundation
import IdentityCredentials
import IdentityKit
import IdentityOutbound

/// The push channel: a `SendPush` goes to the devices it names (`targets`, taken when the change
/// happened), else to each of the user's registered devices but those of the session it names,
/// through APNs or FCM by the device's kind. Each device's delivery is
/// its own entry in the delivery ledger (`<message id>/<device id>`), so a redelivered message
/// (a worker killed mid-send) reaches no device twice; a device APNs answers 410 or FCM
/// `UNREGISTERED` for is unregistered with `device.unregistered`. Devices whose delivery may
/// work later are retried together through the channel's delay queues, the others are not
/// sent to again.
struct PushDelivery: Sendable {
    let apps: AppStore
    let settings: MailSettingsStore
    let pushSettings: PushSettingsStore
    let devices: DeviceStore
    let pool: PGPool
    let ledger: DeliveryLedger
    let apnsClient: APNsClient
    let fcmClient: FCMClient
    /// IDENTITY_PUSH_CREDENTIAL_KEY; nil: this worker cannot open any app's credentials.
    let credentialKey: [UInt8]?
    let queues: ChannelQueues
    let counters: Locked<MailerWorker.Counters>

    private enum DeviceOutcome {
        case sent, unregistered, duplicate, skipped
        case failed(ChannelQueues.Failure)
    }

    func handle(_ command: MailerV1.SendPush) -> [OutgoingMessage] {
        let fields = ["message_id": command.messageId, "app_id": command.appId, "kind": command.kind]
        let targets: [MailerV1.PushTarget]
        let credentials: PushCredentials
        let content: (title: String, body: String)
        do {
            let all = command.targets.isEmpty
                ? try devices.list(appId: command.appId, uid: command.uid)
                    .filter { $0.sessionId != command.excludeSessionId }
                    .map { MailerV1.PushTarget(deviceId: $0.id, kind: $0.kind, token: $0.token) }
                : command.targets
            targets = all.filter { command.deviceIds.isEmpty || command.deviceIds.contains($0.deviceId) }
            if targets.isEmpty {
                Log.info("push: no device to send to", fields)
                return []
            }
            guard let credentialKey else {
                return failed(command, deviceIds: targets.map(\.deviceId),
                              .permanent("no IDENTITY_PUSH_CREDENTIAL_KEY: cannot open push credentials"), fields)
            }
            credentials = try PushCredentials.load(appId: command.appId, store: pushSettings, key: credentialKey)
            content = try render(command)
        } catch {
            return failed(command, deviceIds: command.deviceIds, .transient(String(describing: error)), fields)
        }
        var retry: [String] = []
        var dead: [String] = []
        var lastFailure = ChannelQueues.Failure.transient("")
        for device in targets {
            let deviceFields = fields.merging(["device_id": device.deviceId, "device_kind": device.kind]) { $1 }
            switch deliver(command, to: device, content: content, credentials: credentials, fields: deviceFields) {
            case .sent:
                counters.withLock { $0.sent += 1 }
                ServiceMetrics.deliveries.inc("push", "sent")
                Log.info("push sent", deviceFields)
            case .unregistered:
                Log.info("push: the device is gone; unregistered", deviceFields)
            case .duplicate:
                counters.withLock { $0.duplicatesDropped += 1 }
                ServiceMetrics.deliveries.inc("push", "duplicate")
                Log.info("push already sent to this device or being sent; dropped", deviceFields)
            case .skipped:
                break
            case .failed(let failure):
                lastFailure = failure
                if case .transient = failure { retry.append(device.deviceId) } else { dead.append(device.deviceId) }
            }
        }
        var followUps: [OutgoingMessage] = []
        if !retry.isEmpty { followUps += failed(command, deviceIds: retry, lastFailure, fields) }
        if !dead.isEmpty { followUps += failed(command, deviceIds: dead, .permanent("refused"), fields) }
        return followUps
    }

    private func deliver(_ command: MailerV1.SendPush, to device: MailerV1.PushTarget, content: (title: String, body: String),
                         credentials: PushCredentials, fields: [String: String]) -> DeviceOutcome {
        let ledgerId = command.messageId + "/" + device.deviceId
        do {
            guard try ledger.claim(messageId: ledgerId, appId: command.appId) else { return .duplicate }
        } catch {
            return .failed(.transient(String(describing: error)))
        }
        let outcome: DeviceOutcome
        switch device.kind {
        case "apns":
            guard let apns = credentials.apns else {
                Log.warning("push: the app has no APNs credentials; device skipped", fields)
                outcome = .skipped
                break
            }
            switch apnsClient.send(appId: command.appId, deviceToken: device.token, title: content.title,
                                   body: content.body, credentials: apns) {
            case .sent: outcome = .sent
            case .unregistered: outcome = unregister(device, command, reason: "apns_unregistered")
            case .refused(let reason): outcome = .failed(.permanent(reason))
            case .transient(let reason): outcome = .failed(.transient(reason))
            }
        case "fcm":
            guard let account = credentials.fcm else {
                Log.warning("push: the app has no FCM service account; device skipped", fields)
                outcome = .skipped
                break
            }
            switch fcmClient.send(appId: command.appId, deviceToken: device.token, title: content.title,
                                  body: content.body, account: account) {
            case .sent: outcome = .sent
            case .unregistered: outcome = unregister(device, command, reason: "fcm_unregistered")
            case .refused(let reason): outcome = .failed(.permanent(reason))
            case .transient(let reason): outcome = .failed(.transient(reason))
            }
        default:
            // VoIP pushes wake a call UI: a security alert is not one.
            outcome = .skipped
        }
        switch outcome {
        case .failed:
            try? ledger.release(messageId: ledgerId)
        default:
            try? ledger.markSent(messageId: ledgerId)
        }
        return outcome
    }

    /// The device's row (if it is still registered to this user; a target may have gone with
    /// its session since), with its `device.unregistered`.
    private func unregister(_ device: MailerV1.PushTarget, _ command: MailerV1.SendPush, reason: String) -> DeviceOutcome {
        do {
            _ = try pool.transaction { connection in
                try devices.unregister(appId: command.appId, uid: command.uid, deviceId: device.deviceId, reason: reason,
                                       on: connection)
            }
            return .unregistered
        } catch {
            return .failed(.transient("unregistering the device failed: \(error)"))
        }
    }

    private func render(_ command: MailerV1.SendPush) throws -> (title: String, body: String) {
        let app = try apps.find(id: command.appId)
        let mail = try settings.settings(appId: command.appId)
        let templates = MessageTemplates(overrides: mail.templates, defaultLanguage: mail.defaultLocale)
        var values = ["app_name": app?.name ?? "your app"]
        for value in command.values where MailRenderer.extraPlaceholders.contains(value.name) { values[value.name] = value.value }
        return MailRenderer().renderPush(kind: command.kind, templates: templates,
                                         language: templates.language(kind: command.kind, preferences: command.languages),
                                         values: values)
    }

    private func failed(_ command: MailerV1.SendPush, deviceIds: [String], _ failure: ChannelQueues.Failure,
                        _ fields: [String: String]) -> [OutgoingMessage] {
        var next = command
        next.attempt += 1
        next.deviceIds = deviceIds
        return queues.afterFailure(next, messageId: command.messageId, appId: command.appId, attempt: Int(command.attempt),
                                   failure: failure, counters: counters, fields: fields).map { [$0] } ?? []
    }
}
