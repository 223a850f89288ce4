import IdentityKit
import XCTest

/// `AppSettingsUpdate.handsOverAccounts`: which settings a console session changes only with a
/// recent sign-in (docs/console.md, "Pages").
final class AppSettingsHandOverTests: XCTestCase {
    private func handsOver(_ body: [String: JSONValue]) -> Bool {
        let (update, problems) = AppSettingsUpdate.parse(.object(body))
        XCTAssertEqual(problems.count, 0, "\(body)")
        return update.handsOverAccounts
    }

    func testWhatCanHandOverAccountsOrMail() {
        for body: [String: JSONValue] in [
            ["firebase_trust_email_verified": .bool(true)], ["firebase_project_id": .string("p")],
            ["google_client_ids": .array([.string("x.apps.googleusercontent.com")])], ["apple_team_id": .string("ABCDE12345")],
            ["allowed_origins": .array([.string("https://a.example")])], ["domains": .array([.string("id.a.example")])],
            ["path_prefix": .string("/auth")], ["profile": .string("session-object")], ["deep_link_url": .string("https://a.example/auth")],
            ["mail_from_address": .string("no-reply@a.example")], ["mail_from_name": .string("A")],
            ["mail_templates": .object(["password_reset.subject": .string("x")])], ["sms_from": .string("+15551234567")],
            ["security_alerts": .bool(false)], ["webauthn_rp_id": .string("a.example")],
        ] {
            XCTAssertTrue(handsOver(body), "\(body)")
        }
    }

    func testWhatHandsNothingOver() {
        for body: [String: JSONValue] in [
            [:], ["access_token_ttl": .number(600)], ["session_idle_timeout": .number(1800)],
            ["rate_limits": .object(["sign_in_per_ip": .string("10/15m")])], ["sms_breaker_hourly": .number(100)],
            ["default_locale": .string("de")], ["jwks_cache_seconds": .number(120)],
        ] {
            XCTAssertFalse(handsOver(body), "\(body)")
        }
    }
}
