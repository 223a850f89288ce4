import Foundation
import XCTest
@testable import IdentityGateway
@testable import IdentityKit

/// The console takes its audit actions and its overlap bounds from the admin API's declarations
/// (proto/, generated), and renders an endpoint's delivery log escaped.
final class ConsoleDeclaredRulesTests: XCTestCase {
    /// Each user action is an admin operation whose declared action names its audit row.
    func testEveryUserActionIsAnAuditedAdminOperation() {
        let actions: [ConsoleUserActions.Action] = [.disable, .enable, .endSessions, .endSession("ses_1"), .resetMfa, .delete]
        XCTAssertEqual(actions.map { $0.operation.audit }, [
            "admin.users.disable", "admin.users.enable", "admin.sessions.revoke_all", "admin.sessions.revoke",
            "admin.users.mfa_reset", "admin.users.delete",
        ])
        for operation in actions.map(\.operation) {
            XCTAssertEqual(operation.access, .secretKey, operation.id)
        }
    }

    /// The bounds the console checks are those the API document publishes for the same field.
    func testOverlapBoundsAreTheDocumentedOnes() throws {
        for (name, range, fallback) in [
            ("RotateSecretKeyRequest", ConsoleSecretKeys.overlapRange, ConsoleSecretKeys.defaultOverlap),
            ("WebhookRotateSecretRequest", ConsoleWebhookEndpoint.overlapRange, ConsoleWebhookEndpoint.defaultOverlap),
        ] {
            let schema = try XCTUnwrap(JSONValue.parse(Data(try XCTUnwrap(DeclaredOperation.requestSchemas[name]).utf8)))
            let field = try XCTUnwrap(schema["properties"]?["overlap_seconds"])
            XCTAssertEqual(field["minimum"], .number(Double(range.lowerBound)), name)
            XCTAssertEqual(field["maximum"], .number(Double(range.upperBound)), name)
            XCTAssertEqual(field["default"], .number(Double(fallback) ?? -1), name)
        }
        XCTAssertEqual(ConsoleWebhookEndpoint.overlapRange, 0...604_800)
        XCTAssertNil(DeclaredBounds.problem(604_800, in: ConsoleWebhookEndpoint.overlapRange))
        XCTAssertEqual(DeclaredBounds.problem(604_801, in: ConsoleWebhookEndpoint.overlapRange), "must be an integer from 0 to 604800")
        XCTAssertEqual(DeclaredBounds.problem(-1, in: ConsoleSecretKeys.overlapRange), "must be an integer from 0 to 2592000")
    }

    func testTheDeliveryLogShowsEachAttemptEscaped() throws {
        let delivery = try XCTUnwrap(JSONValue.parse(Data(#"""
            {"webhook_id": "evt_1", "event_type": "user.created", "state": "dead", "attempts": 2, "next_attempt_at": null,
             "created_at": "2026-12-03T10:00:00Z", "last_attempts": [
               {"at": "2026-12-03T10:00:05Z", "status_code": null, "response_ms": 12, "outcome": "dead_lettered", "error": "<refused>"},
               {"at": "2026-12-03T10:00:00Z", "status_code": 500, "response_ms": 40, "outcome": "failed"}]}
            """#.utf8)))
        let html = ConsoleWebhookDeliveries.table([delivery])
        XCTAssertTrue(html.contains(#"<tr data-delivery="evt_1">"#), html)
        XCTAssertTrue(html.contains(#"data-state="dead">dead</span>"#), html)
        XCTAssertTrue(html.contains("HTTP <span class=\"status\">—</span> · 12 ms · &lt;refused&gt;"), html)
        XCTAssertTrue(html.contains("HTTP <span class=\"status\">500</span> · 40 ms</li>"), html)
        XCTAssertFalse(html.contains("<refused>"))
        XCTAssertTrue(ConsoleWebhookDeliveries.table([]).contains("No delivery yet"))
    }
}
