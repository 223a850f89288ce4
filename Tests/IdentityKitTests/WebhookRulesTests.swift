import Foundation
import XCTest
@testable import IdentityKit

final class WebhookRulesTests: XCTestCase {
    func testAFilterIsEventNamesOrAStarAlone() {
        XCTAssertNil(WebhookRules.eventsProblem(["*"]))
        XCTAssertNil(WebhookRules.eventsProblem(["user.created", "refresh_token.reuse_detected", "passkey.sign_count_regressed"]))
        XCTAssertNotNil(WebhookRules.eventsProblem([]))
        XCTAssertNotNil(WebhookRules.eventsProblem(["*", "user.created"]))
        for bad in ["user", "User.created", "user..created", ".user", "user.created.", "user created", "user.*",
                    String(repeating: "a.", count: 40) + "b"] {
            XCTAssertNotNil(WebhookRules.eventsProblem([bad]), bad)
        }
        XCTAssertNotNil(WebhookRules.eventsProblem((0...50).map { "event.n\($0)" }))
    }

    func testTheDefaultScheduleSpansMoreThanADay() {
        XCTAssertGreaterThanOrEqual(WebhookRules.defaultRetrySchedule.reduce(0, +), 24 * 3600)
    }

    func testSchedulesAreDurationsWithUnits() {
        XCTAssertEqual(WebhookRules.parseSchedule("250ms, 5s,5m,2h"), [0.25, 5, 300, 7200])
        for bad in ["", "5", "5x", "-1s", "0s", "s", "5s,,", "nanms"] {
            XCTAssertNil(WebhookRules.parseSchedule(bad), bad)
        }
    }

    func testThePayloadIsTheStandardEnvelopeAroundTheEventAsStreamed() throws {
        let event = Data(#"{"event_id":"evt_1","app_id":"app_1","uid":"u_1","time":"2026-12-03T07:00:00.000001Z"}"#.utf8)
        let made = try XCTUnwrap(WebhookRules.payload(eventName: "user.created", eventJSON: event))
        XCTAssertEqual(made.uid, "u_1")
        XCTAssertEqual(made.body, #"{"type":"user.created","timestamp":"2026-12-03T07:00:00.000001Z","data":"#
                       + String(decoding: event, as: UTF8.self) + "}")
        XCTAssertNotNil(JSONValue.parse(Data(made.body.utf8)))
        XCTAssertEqual(WebhookRules.payload(eventName: "x.y", eventJSON: Data(#"{"event_id":"e"}"#.utf8))?.uid, "")
        XCTAssertNil(WebhookRules.payload(eventName: "x.y", eventJSON: Data("[1]".utf8)))
    }
}
