import Foundation
import XCTest
@testable import IdentityKit
@testable import IdentityMailerWorker

/// The mailer's dispatch table (generated from gateway.proto) knows each delivery command, and a
/// channel's handlers refuse another channel's kind, so the consumer drops it rather than
/// delivering it on the wrong channel.
final class MailerDispatchTests: XCTestCase {
    func testTheTableKnowsEachDeliveryCommandAndNothingElse() {
        XCTAssertEqual(Set(MailerCommandDispatch.table.keys),
                       [MailerV1.SendEmail.protoName, MailerV1.SendPush.protoName, MailerV1.SendSms.protoName])
        XCTAssertNil(MailerCommandDispatch.table[TokenV1.SignIn.protoName])
    }

    func testAChannelRefusesAnotherChannelsKind() throws {
        let smsOnly = ChannelHandlers(channel: .sms)
        let mail = BusMessage(type: MailerV1.SendEmail.protoName,
                              body: try ProtoJSON.encode(MailerV1.SendEmail(messageId: "mail_1", appId: "app_1", to: "a@example.com",
                                                                            kind: "sign_in_code", code: "")))
        let entry = try XCTUnwrap(MailerCommandDispatch.table[mail.type])
        XCTAssertThrowsError(try entry(smsOnly, mail)) { XCTAssertTrue($0 is ChannelHandlers.OtherChannel) }
    }

    func testAnUnreadableBodyIsAnErrorNotADelivery() throws {
        let entry = try XCTUnwrap(MailerCommandDispatch.table[MailerV1.SendSms.protoName])
        let garbage = BusMessage(type: MailerV1.SendSms.protoName, body: Data("not json".utf8))
        XCTAssertThrowsError(try entry(ChannelHandlers(channel: .sms), garbage))
    }
}

private extension BusMessage {
    init(type: String, body: Data) {
        self.init(type: type, body: body, correlationId: "", replyTo: "", messageId: "", appId: "", requestId: "req_test",
                  callerToken: "", deliveryTag: 0, linkGeneration: 0, redelivered: false)
    }
}
