import Foundation
import IdentityKit

/// Builds the command that asks the mailer worker to send a code. It is published after the
/// flow's transaction committed (as a follow-up of the reply), never stored: the code exists
/// at rest only as a keyed hash.
enum MailRequest {
    static func code(_ code: String, kind: VerificationCodeStore.Purpose, to email: String, appId: String,
                     requestId: String, seal: MailPayloadSeal) throws -> OutgoingMessage {
        let messageId = "mail_" + Identifiers.nowULID()
        // The message is persistent and may be retried or dead-lettered: the code goes sealed.
        let command = MailerV1.SendEmail(messageId: messageId, appId: appId, to: email, kind: kind.rawValue, code: "",
                                         sealedCode: Data(try seal.seal(code, messageId: messageId)))
        var message = OutgoingMessage(exchange: "", routingKey: DeliveryChannel.email.queue,
                                      type: MailerV1.SendEmail.protoName, body: try ProtoJSON.encode(command))
        message.messageId = messageId
        message.appId = appId
        message.requestId = requestId
        message.persistent = true
        return message
    }
}

/// Settings the email flows share.
struct CodeSettings: Sendable {
    let codes: VerificationCodeStore
    let lifetimeSeconds: Int
    let verificationCooldownSeconds: Int
    let mailSeal: MailPayloadSeal
}

extension VerificationCodeStore.Check {
    /// The error a failed check answers with.
    var failure: ServiceError? {
        switch self {
        case .valid: nil
        case .invalid: .invalidCode
        case .expired: .codeExpired
        case .limited(let statuses): .rateLimited(statuses)
        }
    }
}
