import Foundation
import IdentityCredentials
import IdentityKit

/// Builds the command that asks the mailer workers' SMS channel to text a code, published after
/// the flow's transaction committed (a follow-up of the reply), like `MailRequest`: the code
/// travels sealed and rests nowhere in clear.
enum SmsRequest {
    static func code(_ code: String, kind: VerificationCodeStore.Purpose, to phone: String, appId: String,
                     languages: [String], requestId: String, seal: MailPayloadSeal) throws -> OutgoingMessage {
        let command = try Self.command(code, kind: kind, to: phone, appId: appId, languages: languages, seal: seal)
        var message = OutgoingMessage(exchange: "", routingKey: DeliveryChannel.sms.queue,
                                      type: MailerV1.SendSms.protoName, body: try ProtoJSON.encode(command))
        message.messageId = command.messageId
        message.appId = appId
        message.requestId = requestId
        message.persistent = true
        return message
    }

    /// The `SendSms` itself, its code sealed to its message id: published as above, or queued
    /// through the outbox in a flow's transaction (the SMS factor's codes).
    static func command(_ code: String, kind: VerificationCodeStore.Purpose, to phone: String, appId: String,
                        languages: [String], seal: MailPayloadSeal) throws -> MailerV1.SendSms {
        let messageId = "sms_" + Identifiers.nowULID()
        return MailerV1.SendSms(messageId: messageId, appId: appId, to: phone, kind: kind.rawValue,
                                sealedCode: Data(try seal.seal(code, messageId: messageId)), languages: languages)
    }
}
