import Foundation
import XCTest
@testable import IdentityKit

/// What a link keeps across a lost connection (`UnconfirmedPublishes`), how a node list is read
/// (`AMQPEndpoints`) and where a command queue dead-letters (`BusTopology.deadLetters`).
final class BusFailoverTests: XCTestCase {
    private func message(_ id: String, expiration: Int? = nil) -> OutgoingMessage {
        var message = OutgoingMessage(exchange: "", routingKey: "identity.token.commands", type: "t", body: Data(id.utf8))
        message.messageId = id
        message.expirationMilliseconds = expiration
        return message
    }

    func testConfirmedMessagesAreNotSentAgain() {
        var unconfirmed = UnconfirmedPublishes()
        for id in ["a", "b", "c", "d"] { unconfirmed.published(message(id), now: 0) }
        XCTAssertEqual(unconfirmed.settle(tag: 2, multiple: true, acked: true).count, 0)
        XCTAssertEqual(unconfirmed.settle(tag: 4, multiple: false, acked: true).count, 0)
        XCTAssertEqual(unconfirmed.takeForResend(now: 0).map(\.messageId), ["c"])
        XCTAssertEqual(unconfirmed.count, 0)
    }

    func testNackedMessagesAreReturnedAndForgotten() {
        var unconfirmed = UnconfirmedPublishes()
        for id in ["a", "b"] { unconfirmed.published(message(id), now: 0) }
        XCTAssertEqual(unconfirmed.settle(tag: 1, multiple: false, acked: false).map(\.messageId), ["a"])
        XCTAssertEqual(unconfirmed.takeForResend(now: 0).map(\.messageId), ["b"])
    }

    func testTagsStartAgainOnTheNewConnection() {
        var unconfirmed = UnconfirmedPublishes()
        unconfirmed.published(message("old"), now: 0)
        let resend = unconfirmed.takeForResend(now: 0)
        for message in resend { unconfirmed.published(message, now: 0) }
        unconfirmed.published(message("new"), now: 0)
        // On the new channel "old" is tag 1 and "new" tag 2.
        XCTAssertEqual(unconfirmed.settle(tag: 1, multiple: false, acked: true).count, 0)
        XCTAssertEqual(unconfirmed.takeForResend(now: 0).map(\.messageId), ["new"])
    }

    func testExpiredCommandsAreDroppedAndTheRestKeepWhatIsLeftOfTheirDeadline() {
        var unconfirmed = UnconfirmedPublishes()
        unconfirmed.published(message("late", expiration: 1000), now: 0)
        unconfirmed.published(message("early", expiration: 3000), now: 0)
        unconfirmed.published(message("event"), now: 0)
        let resend = unconfirmed.takeForResend(now: 1_500_000_000)
        XCTAssertEqual(resend.map(\.messageId), ["early", "event"])
        XCTAssertEqual(resend[0].expirationMilliseconds, 1500)
        XCTAssertNil(resend[1].expirationMilliseconds)
    }

    func testEndpointsReadAListOfNodes() throws {
        let endpoints = try AMQPEndpoints("amqp://u:p@127.0.0.1:56701/v, amqp://u:p@127.0.0.1:56702/v,amqp://u:p@h3:56703/v")
        XCTAssertEqual(endpoints.urls.map(\.port), [56701, 56702, 56703])
        XCTAssertEqual(endpoints.urls.map(\.host), ["127.0.0.1", "127.0.0.1", "h3"])
        XCTAssertEqual(Set(endpoints.urls.map(\.vhost)), ["v"])
        XCTAssertThrowsError(try AMQPEndpoints(" , "))
        XCTAssertThrowsError(try AMQPEndpoints("amqp://u:p@h:1/v,http://nope"))
    }

    func testCommandQueuesDeadLetterToTheirKindsDeadQueue() {
        XCTAssertEqual(BusTopology.deadLetters(of: BusTopology.tokenCommands), "identity.token.dead")
        XCTAssertEqual(BusTopology.deadLetters(of: BusTopology.legacyMailerCommands), BusTopology.legacyMailerDead)
        XCTAssertEqual(BusTopology.deadLetters(of: DeliveryChannel.push.queue), DeliveryChannel.push.deadQueue)
        XCTAssertEqual(BusTopology.deadLetters(of: BusTopology.revocationCommands), BusTopology.revocationDead)
        XCTAssertEqual(BusTopology.deadLetters(of: "identity.mailer.sms"), "identity.mailer.sms.dead")
    }
}
