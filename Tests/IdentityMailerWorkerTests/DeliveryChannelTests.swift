import Foundation
import XCTest
@testable import IdentityMailerWorker
@testable import IdentityKit

/// The channel machinery every channel shares: names, retries and dead letters.
final class DeliveryChannelTests: XCTestCase {
    func testEachChannelHasItsOwnQueues() {
        XCTAssertEqual(DeliveryChannel.email.queue, "identity.mailer.email")
        XCTAssertEqual(DeliveryChannel.push.queue, "identity.mailer.push")
        XCTAssertEqual(DeliveryChannel.push.deadQueue, "identity.mailer.push.dead")
        XCTAssertEqual(DeliveryChannel.email.retryQueue(2), "identity.mailer.email.delay.2")
        XCTAssertEqual(DeliveryChannel.email.legacyQueue, "identity.mailer.commands")
        XCTAssertNil(DeliveryChannel.push.legacyQueue)
        XCTAssertEqual(DeliveryChannel.sms.queue, "identity.mailer.sms")
        XCTAssertEqual(DeliveryChannel.sms.deadQueue, "identity.mailer.sms.dead")
        XCTAssertEqual(DeliveryChannel.sms.retryQueue(0), "identity.mailer.sms.delay.0")
        XCTAssertNil(DeliveryChannel.sms.legacyQueue)
        XCTAssertEqual(DeliveryChannel.named("sms"), .sms)
        // The gateway declares every channel's queue, so nothing published early is dropped.
        for channel in DeliveryChannel.all { XCTAssertTrue(BusTopology.commandQueues.contains(channel.queue)) }
    }

    func testATransientFailureIsRetriedThenDeadLettered() throws {
        let queues = ChannelQueues(channel: .push, retryDelays: [300, 600])
        let counters = Locked(MailerWorker.Counters())
        let command = MailerV1.SendPush(messageId: "push_1", appId: "app_1", uid: "u", kind: "k", attempt: 1)
        let first = try XCTUnwrap(queues.afterFailure(command, messageId: "push_1", appId: "app_1", attempt: 0,
                                                      failure: .transient("503"), counters: counters, fields: [:]))
        XCTAssertEqual(first.routingKey, "identity.mailer.push.delay.0")
        XCTAssertEqual(first.exchange, BusTopology.mailerExchange)
        XCTAssertEqual(first.expirationMilliseconds, 300)
        XCTAssertTrue(first.persistent)
        let last = try XCTUnwrap(queues.afterFailure(command, messageId: "push_1", appId: "app_1", attempt: 2,
                                                     failure: .transient("503"), counters: counters, fields: [:]))
        XCTAssertEqual(last.routingKey, "identity.mailer.push.dead")
        XCTAssertNil(last.expirationMilliseconds)
        let refused = try XCTUnwrap(queues.afterFailure(command, messageId: "push_1", appId: "app_1", attempt: 0,
                                                        failure: .permanent("400"), counters: counters, fields: [:]))
        XCTAssertEqual(refused.routingKey, "identity.mailer.push.dead")
        XCTAssertEqual(counters.withLock { $0.retried }, 1)
        XCTAssertEqual(counters.withLock { $0.deadLettered }, 2)
    }

    func testEveryAlertKindHasPushAndMailTextsInEveryLanguage() {
        let builtIn = MessageTemplates(overrides: [:], defaultLanguage: nil)
        for language in MessageTexts.builtIn.keys {
            for kind in SecurityAlertKind.allCases {
                let push = MailRenderer().renderPush(kind: kind.template, templates: builtIn, language: language,
                                                     values: ["app_name": "Shop", "device": "Firefox", "ip": "1.2.3.4", "time": "t",
                                                             "provider": "Google"])
                XCTAssertTrue(push.title.contains("Shop") || push.body.contains("Shop"), "\(language) \(kind.rawValue)")
                XCTAssertFalse(push.body.contains("{{") || push.title.isEmpty, "\(language) \(kind.rawValue)")
                let mail = MailRenderer().render(kind: kind.template, templates: builtIn, language: language,
                                                 values: ["app_name": "Shop", "device": "<b>", "ip": "", "time": "", "code": "",
                                                          "link": "", "email": ""])
                XCTAssertFalse(mail.subject.isEmpty, "\(language) \(kind.rawValue)")
                XCTAssertFalse(mail.html.contains("<b>"), "values are escaped in HTML: \(language) \(kind.rawValue)")
            }
        }
        let custom = MailRenderer().renderPush(kind: SecurityAlertKind.newSignIn.template,
                                               templates: MessageTemplates(overrides: ["security_alert_new_sign_in": ["push_title": "Hi {{device}}"]],
                                                                           defaultLanguage: nil),
                                               language: "en", values: ["device": "Phone"])
        XCTAssertEqual(custom.title, "Hi Phone")
    }
}
