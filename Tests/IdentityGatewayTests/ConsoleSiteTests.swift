import Foundation
import XCTest
@testable import IdentityGateway
@testable import IdentityKit

/// The console's pure parts: form bodies, path matching, the per-session form token, escaping,
/// and which admin command a viewer's session may carry.
final class ConsoleSiteTests: XCTestCase {
    func testFormBodiesAreDecodedAndTheFirstValueWins() {
        let form = ConsoleSite.form(Data("email=a%2Bb%40example.com&note=two+words&email=second&empty=&flag".utf8))
        XCTAssertEqual(form["email"], "a+b@example.com")
        XCTAssertEqual(form["note"], "two words")
        XCTAssertEqual(form["empty"], "")
        XCTAssertEqual(form["flag"], "")
    }

    func testPathsMatchOnlyTheirPatternWithNonEmptyParameters() {
        XCTAssertEqual(ConsoleSite.match(["apps", "app_1", "users", "u1"], ["apps", "*", "users", "*"]), ["app_1", "u1"])
        XCTAssertNil(ConsoleSite.match(["apps", "", "users"], ["apps", "*", "users"]))
        XCTAssertNil(ConsoleSite.match(["apps", "a", "settings", "x"], ["apps", "*", "settings"]))
        XCTAssertTrue(ConsoleSite.serves("/console") && ConsoleSite.serves("/console/apps/x/settings"))
        XCTAssertFalse(ConsoleSite.serves("/consoles") || ConsoleSite.serves("/v1/console"))
    }

    /// The console is answered before the router: no API route may live under its paths (it
    /// would never be reached), which is also why the OpenAPI document leaves the console out.
    func testNoRouteOfTheTableLivesUnderTheConsole() throws {
        let routes = try servedRoutesForTests()
        XCTAssertGreaterThan(routes.count, 50)
        XCTAssertEqual(routes.filter { ConsoleSite.serves($0.pattern) }.map(\.pattern), [])
    }

    func testTheFormTokenIsPerSessionAndNotTheTokenItself() {
        let one = ConsoleSite.csrfToken(sessionToken: "st_one")
        XCTAssertEqual(one, ConsoleSite.csrfToken(sessionToken: "st_one"))
        XCTAssertNotEqual(one, ConsoleSite.csrfToken(sessionToken: "st_two"))
        XCTAssertFalse(one.contains("st_one"))
        XCTAssertEqual(one.count, 43)
    }

    func testEveryValueIsEscaped() {
        XCTAssertEqual(ConsoleHTML.escape("<a href=\"x\">'&'</a>"), "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;")
        XCTAssertEqual(ConsoleHTML.component("a b/c?d"), "a%20b%2Fc%3Fd")
    }

    func testOnlyAnEmptySettingsUpdateCountsAsARead() throws {
        func message(_ settings: String, type: String = AdminV1.UpdateAppSettings.protoName) throws -> BusMessage {
            let body = try ProtoJSON.encode(AdminV1.UpdateAppSettings(appId: "app", settingsJson: settings, actor: "console:u"))
            return BusMessage(type: type, body: body, correlationId: "", replyTo: "", messageId: "", appId: "app", requestId: "req_test",
                              callerToken: "st_x", deliveryTag: 0, linkGeneration: 0, redelivered: false)
        }
        XCTAssertTrue(CallerAuthority.readsSettingsOnly(try message("{}")))
        XCTAssertFalse(CallerAuthority.readsSettingsOnly(try message(#"{"google_client_ids":["x"]}"#)))
        XCTAssertFalse(CallerAuthority.readsSettingsOnly(try message("{}", type: AdminV1.SetUserDisabled.protoName)))
    }
}
