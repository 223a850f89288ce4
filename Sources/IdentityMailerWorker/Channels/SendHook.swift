import Foundation
import IdentityCredentials
import IdentityKit
import IdentityOutbound

/// The `send_email` and `send_sms` auth hooks: when the app set one, the message (written in
/// the user's language, as we would send it) goes to the app's backend, which delivers it
/// itself, instead of to our SMTP server or SMS account. A hook that fails open falls back to
/// our own sending; one that fails closed is a transient failure of the delivery (retried with
/// the channel's backoff, then dead-lettered), each attempt with its audit row.
struct SendHook: Sendable {
    let client: AuthHookClient

    enum Outcome: Equatable {
        /// The app's backend took the message.
        case sentByApp
        /// No hook, or a hook that failed open: we send it.
        case ownSending
        case failed(String)
    }

    func offer(appId: String, kind: AuthHook.Kind, payload: [String: JSONValue]) -> Outcome {
        do {
            guard let hook = try client.hook(appId: appId, kind: kind) else { return .ownSending }
            return try client.ask(hook, appId: appId, payload: payload, target: nil, ip: nil) == nil ? .ownSending : .sentByApp
        } catch let error as ServiceError where error.code == ServiceError.hookFailed.code {
            return .failed("the app's \(kind.rawValue) hook failed and fails closed")
        } catch {
            return .failed(String(describing: error))
        }
    }
}

extension SendHook {
    /// The mailer opens hook secrets with its mail-payload key, the only key it holds.
    static func make(configuration: MailerWorkerConfiguration, pool: PGPool) -> SendHook {
        SendHook(client: AuthHookClient(pool: pool, seal: AuthHookSecretSeal(mailPayloadKey: configuration.mailPayloadKey),
                                        fairness: configuration.hooks))
    }
}
