import Foundation
import IdentityKit

/// Builds the command that asks the mailer workers' SMS channel to text a code, published after
/// the flow's transaction committed (a follow-up of the reply), like `MailRequest`: the code
/// travels sealed and rests nowhere in clear.
enum SmsRequest {
    static func code(_ code: String, kind: VerificationCodeStore.Purpose, to phone: String, appId: String,
                     requestId: String, seal: MailPayloadSeal) throws -> OutgoingMessage {
        let messageId = "sms_" + Identifiers.nowULID()
        let command = MailerV1.SendSms(messageId: messageId, appId: appId, to: phone, kind: kind.rawValue,
                                       sealedCode: Data(try seal.seal(code, messageId: messageId)))
        var message = OutgoingMessage(exchange: "", routingKey: DeliveryChannel.sms.queue,
                                      type: MailerV1.SendSms.protoName, body: try ProtoJSON.encode(command))
        message.messageId = messageId
        message.appId = appId
        message.requestId = requestId
        message.persistent = true
        return message
    }
}
