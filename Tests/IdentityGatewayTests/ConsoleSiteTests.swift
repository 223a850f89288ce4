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

    func testAViewerOnlyReadsTheSettingsTheWebhooksAndAUsersPasskeys() throws {
        func message(_ type: String, _ body: Data) -> BusMessage {
            BusMessage(type: type, body: body, correlationId: "", replyTo: "", messageId: "", appId: "app", requestId: "req_test",
                       callerToken: "st_x", deliveryTag: 0, linkGeneration: 0, redelivered: false)
        }
        func settings(_ json: String, type: String = AdminV1.UpdateAppSettings.protoName) throws -> BusMessage {
            message(type, try ProtoJSON.encode(AdminV1.UpdateAppSettings(appId: "app", settingsJson: json, actor: "console:u")))
        }
        func webhooks(_ action: String) throws -> BusMessage {
            message(AdminV1.ManageWebhooks.protoName,
                    try ProtoJSON.encode(AdminV1.ManageWebhooks(appId: "app", actor: "console:u", action: action)))
        }
        XCTAssertTrue(CallerAuthority.readsOnly(try settings("{}")))
        XCTAssertFalse(CallerAuthority.readsOnly(try settings(#"{"google_client_ids":["x"]}"#)))
        XCTAssertFalse(CallerAuthority.readsOnly(try settings("{}", type: AdminV1.SetUserDisabled.protoName)))
        XCTAssertTrue(CallerAuthority.readsOnly(message(AdminV1.ListUserPasskeys.protoName,
                                                        try ProtoJSON.encode(AdminV1.ListUserPasskeys(appId: "app", uid: "u")))))
        for action in ["list", "get", "deliveries"] {
            XCTAssertTrue(CallerAuthority.readsOnly(try webhooks(action)), action)
        }
        for action in ["create", "update", "delete", "rotate_secret", "replay", "List", ""] {
            XCTAssertFalse(CallerAuthority.readsOnly(try webhooks(action)), action)
        }
    }

    /// A user action's path: the five named ones, and one session's end with a plain id only.
    func testUserActionPathsAreTheDeclaredOnesOnly() {
        XCTAssertEqual(ConsoleUserActions.Action(["delete"]), .delete)
        XCTAssertEqual(ConsoleUserActions.Action(["reset-mfa"]), .resetMfa)
        XCTAssertEqual(ConsoleUserActions.Action(["end-sessions"]), .endSessions)
        XCTAssertEqual(ConsoleUserActions.Action(["sessions", "ses_01abc", "end"]), .endSession("ses_01abc"))
        XCTAssertNil(ConsoleUserActions.Action(["sessions", "a/b", "end"]))
        XCTAssertNil(ConsoleUserActions.Action(["sessions", "", "end"]))
        XCTAssertNil(ConsoleUserActions.Action(["sessions", String(repeating: "a", count: 65), "end"]))
        XCTAssertNil(ConsoleUserActions.Action(["remove"]))
        XCTAssertNil(ConsoleUserActions.Action(["delete", "now"]))
        XCTAssertEqual(ConsoleUserActions.Action.endSession("ses_1").path, "sessions/ses_1/end")
    }

    /// Destructive actions that take something from the account need a recent sign-in; ending
    /// sessions and enabling do not.
    func testWhichUserActionsNeedAFreshSignIn() {
        XCTAssertEqual([ConsoleUserActions.Action.disable, .enable, .endSessions, .endSession("s"), .resetMfa, .delete]
            .map(\.needsFreshSignIn), [true, false, false, false, true, true])
    }

    func testSignInMethodsNameThePasswordOnce() {
        XCTAssertEqual(ConsoleUsers.methods(password: true, providers: ["password", "google"]), "password, google")
        XCTAssertEqual(ConsoleUsers.methods(password: false, providers: ["apple"]), "apple")
    }
}
