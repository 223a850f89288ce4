import Foundation
import IdentityCredentials
import IdentityKit

/// Builds the command that asks the mailer worker to send a code. It is published after the
/// flow's transaction committed (as a follow-up of the reply), never stored: the code exists
/// at rest only as a keyed hash.
enum MailRequest {
    static func code(_ code: String, kind: VerificationCodeStore.Purpose, to email: String, appId: String,
                     languages: [String], requestId: String, seal: MailPayloadSeal) throws -> OutgoingMessage {
        let command = try Self.command(code, kind: kind.rawValue, to: email, appId: appId, languages: languages, seal: seal)
        var message = OutgoingMessage(exchange: "", routingKey: DeliveryChannel.email.queue,
                                      type: MailerV1.SendEmail.protoName, body: try ProtoJSON.encode(command))
        message.messageId = command.messageId
        message.appId = appId
        message.requestId = requestId
        message.persistent = true
        return message
    }

    /// The `SendEmail` itself. The message is persistent and may be retried or dead-lettered,
    /// so the code goes sealed to its message id. Published as above, or queued through the
    /// outbox in a flow's transaction (the email factor's codes).
    /// `languages`: `MessageLanguages.preferences` of the user the code is for.
    static func command(_ code: String, kind: String, to email: String, appId: String, languages: [String],
                        seal: MailPayloadSeal) throws -> MailerV1.SendEmail {
        let messageId = "mail_" + Identifiers.nowULID()
        return MailerV1.SendEmail(messageId: messageId, appId: appId, to: email, kind: kind, code: "",
                                  sealedCode: Data(try seal.seal(code, messageId: messageId)), languages: languages)
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
