import Foundation
import XCTest
@testable import IdentityGateway
@testable import IdentityKit

/// The Settings page's pure parts: its tables name the admin API's settings, a form sends only
/// what it changed, refusals land at their fields, and the template preview escapes.
final class ConsoleSettingsFormTests: XCTestCase {
    private var allFields: [ConsoleSettingField] { ConsoleSettingsSections.all.flatMap(\.fields) }

    /// Every field is a setting `GET /v1/admin/settings` answers (a secret by its set-or-not
    /// flag), and none is on the page twice.
    func testEveryFieldIsASettingOfTheAdminAPIAndAppearsOnce() throws {
        let schema = try XCTUnwrap(JSONValue.parse(Data(try XCTUnwrap(DeclaredOperation.answerSchemas["AppSettings"]).utf8)))
        guard case .object(let properties)? = schema["properties"] else { return XCTFail("no properties") }
        for field in allFields {
            let answered: String = if case .secret(let stateKey, _) = field.kind { stateKey } else { field.name }
            XCTAssertNotNil(properties[answered], field.name)
        }
        let names = allFields.map(\.formName)
        XCTAssertEqual(Set(names).count, names.count)
        XCTAssertEqual(Set(ConsoleSettingsSections.rateLimits.fields.map(\.formName)).count, RateLimitCatalogue.all.count)
        for policy in RateLimitCatalogue.all { XCTAssertFalse(ConsoleRateLimitHints.hint(policy.name).isEmpty, policy.name) }
    }

    func testAFormSendsOnlyWhatItChanged() {
        let section = ConsoleSettingsSections.tokens
        let unchanged = ["access_token_ttl": "900", "access_token_ttl__shown": "900",
                         "session_lifetime": "", "session_lifetime__shown": ""]
        XCTAssertEqual(section.body(unchanged)["access_token_ttl"], nil)
        var changed = unchanged
        changed["access_token_ttl"] = " 600 "
        changed["jwks_cache_seconds"] = "soon"
        let body = section.body(changed)
        XCTAssertEqual(body["access_token_ttl"], .number(600))
        XCTAssertEqual(body["jwks_cache_seconds"], .string("soon"))  // for the API's own "must be an integer"
        XCTAssertNil(body["session_lifetime"])

        // An unticked checkbox is absent from the form: false, sent only when it was on.
        let alerts = ConsoleSettingsSections.security
        XCTAssertEqual(alerts.body(["security_alerts__shown": "true"])["security_alerts"], .bool(false))
        XCTAssertNil(alerts.body(["security_alerts__shown": "false"])["security_alerts"])

        // Lists one a line; calling codes by commas or spaces.
        let sms = ConsoleSettingsSections.sms.body(["sms_allowed_calling_codes": "33, +44 1", "sms_auth_token": "  "])
        XCTAssertEqual(sms["sms_allowed_calling_codes"], .array([.string("33"), .string("+44"), .string("1")]))
        XCTAssertNil(sms["sms_auth_token"])  // an empty secret keeps the one set
        XCTAssertEqual(ConsoleSettingsSections.providers.body(["google_client_ids": " a \n\n b\r\n"])["google_client_ids"],
                       .array([.string("a"), .string("b")]))
    }

    func testRateLimitsAreSentTogetherAndOnlyWhenChanged() {
        let section = ConsoleSettingsSections.rateLimits
        let body = section.body([
            "rate_limit_sign_in_per_ip": "5/1m", "rate_limit_sign_in_per_ip__shown": "100/60s",
            "rate_limit_sign_up_per_ip": "20/3600s", "rate_limit_sign_up_per_ip__shown": "20/3600s",
        ])
        XCTAssertEqual(body.keys.sorted(), ["rate_limits"])
        XCTAssertEqual(body["rate_limits"], .object(["sign_in_per_ip": .string("5/1m")]))
        XCTAssertTrue(section.body([:].merging(section.fields.map { ($0.shownName, "") }) { $1 }).isEmpty)
    }

    /// The API reports every limit under `rate_limits`: each message goes to the limit it names.
    func testRefusalsLandAtTheirFields() {
        let placed = ConsoleSettingsSections.rateLimits.place([
            ("rate_limits", "sign_in_per_ip=5000/60s is above the operator's ceiling of 1000/60s"),
            ("rate_limits", "sign_up_per_ip wants COUNT/WINDOW (e.g. 1000/1h), default or off, got lots"),
            ("rate_limits", "no limit named nope (known: …)"),
        ])
        XCTAssertEqual(placed["rate_limit_sign_in_per_ip"]?.count, 1)
        XCTAssertEqual(placed["rate_limit_sign_up_per_ip"]?.count, 1)
        XCTAssertNil(placed["rate_limit_sign_in_per_identifier"])
        XCTAssertEqual(placed[""], ["no limit named nope (known: …)"])
        let tokens = ConsoleSettingsSections.tokens.place(ConsoleSettings.problems(["access_token_ttl": .number(5)]))
        XCTAssertEqual(tokens["access_token_ttl"], ["must be 300 to 86400 seconds (5 minutes to 24 hours)"])
    }

    func testTheTemplatePreviewFillsSampleValuesAndEscapesTheHTML() {
        var editor = ConsoleMailTemplates.Editor()
        editor.part = "html"
        editor.text = "<b>{{email}}</b> {{code}}<script>x()</script>"
        let settings = JSONValue.object(["mail_templates": .object(["email_code.subject": .string("Code {{code}}")])])
        let preview = ConsoleMailTemplates.preview(editor, settings: settings, appName: "A&B")
        XCTAssertTrue(preview.contains("&lt;b&gt;ada@example.com&lt;/b&gt; 123456&lt;script&gt;"), preview)
        XCTAssertFalse(preview.contains("<script>") || preview.contains("<b>"))
        XCTAssertTrue(preview.contains("<pre id=\"preview-subject\">Code 123456</pre>"), preview)  // the stored subject

        editor = ConsoleMailTemplates.Editor()
        editor.kind = "phone_code"
        editor.part = "text"
        editor.text = "{{app_name}}: {{code}}"
        let sms = ConsoleMailTemplates.preview(editor, settings: .object([:]), appName: "A&B")
        XCTAssertTrue(sms.contains("<pre id=\"preview-sms\">A&amp;B: 123456</pre>"), sms)
        XCTAssertFalse(sms.contains("preview-subject"))

        // A target the API refuses: at the part, or at a malformed language.
        editor.part = "subject"
        XCTAssertNotNil(ConsoleMailTemplates.place([("mail_templates", "wants KIND.PART…")], editor)["template_part"])
        editor.part = "text"
        editor.language = "pt_BR"
        XCTAssertNotNil(ConsoleMailTemplates.place([("mail_templates", "wants KIND.PART…")], editor)["template_language"])
    }
}
