import Foundation
import XCTest
@testable import IdentityCredentials
@testable import IdentityKit
@testable import IdentityTokenWorker

/// Every command the token worker is documented to consume (proto/identity/token/v1/token.proto,
/// proto/identity/admin/v1/*.proto) is answered, and carries the authority it needs: a user's
/// access token (`ActsForUser`), the fresh proof of a way-in change (`ChangesWayIn` and its
/// `FreshProofRule`), the app's secret key (`ActsForAppBackend`). Written against the protocols
/// and the message types, not against how `CommandRouter` dispatches, so the expectations hold
/// whatever code does the dispatch; a dropped conformance or case fails here.
struct CommandCase {
    let command: any ProtoMessage
    /// The user (and session) it acts for when it conforms to `ActsForUser`; nil when it does not.
    let actsFor: (uid: String, session: String)?
    /// `.none`: not `ChangesWayIn`; `.some(rule)`: conforms, with this `freshProof` (nil: this
    /// instance changes no way in).
    let wayIn: FreshProofRule??
    let appBackend: Bool
    /// A console owner's command (`ActsForConsoleOwner`): that owner's console session only.
    let consoleOwner: Bool

    init(_ command: any ProtoMessage, actsFor: (uid: String, session: String)? = nil, wayIn: FreshProofRule?? = .none,
         appBackend: Bool = false, consoleOwner: Bool = false) {
        self.command = command
        self.actsFor = actsFor
        self.wayIn = wayIn
        self.appBackend = appBackend
        self.consoleOwner = consoleOwner
    }

    var type: String { Swift.type(of: command).protoName }

    func message(appId: String = "", callerToken: String = "") throws -> BusMessage {
        var message = BusMessage(type: type, body: try ProtoJSON.encode(command))
        message.appId = appId
        message.callerToken = callerToken
        return message
    }

    /// Every command, with the authority each needs, for user `uid` in session `session` of `app`.
    static func catalogue(app: String = "app_test", uid: String = "usr_test", session: String = "ses_test",
                          password: String = "not the password") -> [CommandCase] {
        let own = (uid: uid, session: session)
        let noSession = (uid: uid, session: "")
        let fresh: FreshProofRule?? = .some(.freshSignIn)
        return [
            // Sign-ins and sign-ups: their authority is their own content (a password, a code, a
            // refresh token, a sealed identity); a guest upgrade acts for the guest it names.
            CommandCase(TokenV1.SignUp(appId: app, email: "new@example.com", password: password), actsFor: (uid: "", session: "")),
            CommandCase(TokenV1.SignUp(appId: app, email: "new@example.com", password: password, guestUid: uid),
                        actsFor: noSession),
            CommandCase(TokenV1.SignIn(appId: app, identifier: "someone@example.com", password: password)),
            CommandCase(TokenV1.GuestSignIn(appId: app, secret: "guest-secret-0123456789")),
            CommandCase(TokenV1.Refresh(appId: app, refreshToken: "rt_unknown")),
            CommandCase(TokenV1.ProviderSignIn(appId: app, guestUid: uid), actsFor: noSession),
            // Apple's word on one of its users, sealed by the provider worker: no user's token.
            CommandCase(TokenV1.ApplyAppleEvent(appId: app)),
            CommandCase(TokenV1.SendEmailCode(appId: app, email: "someone@example.com")),
            CommandCase(TokenV1.VerifyEmailCode(appId: app, email: "someone@example.com", code: "123456", guestUid: uid),
                        actsFor: noSession),
            CommandCase(TokenV1.SendPhoneCode(appId: app, phone: "+33612345678"), actsFor: (uid: "", session: ""),
                        wayIn: .some(nil)),
            CommandCase(TokenV1.VerifyPhoneCode(appId: app, phoneSessionId: "phs_x", code: "123456", guestUid: uid),
                        actsFor: noSession),
            CommandCase(TokenV1.VerifyMfa(appId: app, challengeToken: "mfa_unknown", code: "123456")),
            CommandCase(TokenV1.PasskeySignInOptions(appId: app)),
            CommandCase(TokenV1.VerifyPasskey(appId: app, flowId: "pkf_x", responseJson: "{}")),
            CommandCase(TokenV1.ForgotPassword(appId: app, email: "someone@example.com")),
            CommandCase(TokenV1.CheckPasswordCode(appId: app, email: "someone@example.com", code: "123456")),
            CommandCase(TokenV1.ResetPassword(appId: app, email: "someone@example.com", code: "123456",
                                              password: "a new password 123")),
            CommandCase(TokenV1.Ping(appId: app)),
            // A signed-in user's own commands.
            CommandCase(TokenV1.UpdateProfile(appId: app, uid: uid, firstName: "Ann"), actsFor: noSession),
            CommandCase(TokenV1.SendEmailVerification(appId: app, uid: uid), actsFor: noSession),
            CommandCase(TokenV1.VerifyEmail(appId: app, email: "someone@example.com", code: "123456", uid: uid,
                                            sessionId: session), actsFor: own),
            // Its body carries its own proof (DELETE /v1/me is BEARER_OWN_PROOF): step-up once MFA is on.
            CommandCase(TokenV1.DeleteAccount(appId: app, uid: uid, password: password, sessionId: session), actsFor: own,
                        wayIn: .some(.stepUpWhenMfaOn)),
            CommandCase(TokenV1.RegisterDevice(appId: app, uid: uid, sessionId: session, token: "device-token",
                                               platform: "ios", kind: "apns"), actsFor: own),
            CommandCase(TokenV1.IssueSessionToken(appId: app, uid: uid, sessionId: session), actsFor: own),
            CommandCase(TokenV1.GetMfaStatus(appId: app, uid: uid), actsFor: noSession),
            CommandCase(TokenV1.ListPasskeys(appId: app, uid: uid, sessionId: session), actsFor: own),
            CommandCase(TokenV1.ConfirmEmailChange(appId: app, uid: uid, sessionId: session, code: "123456"), actsFor: own),
            CommandCase(TokenV1.StartEmailChange(appId: app, uid: uid, sessionId: session, email: "new@example.com"),
                        actsFor: own, wayIn: .some(.freshSignIn)),
            // Changes of a way in: a fresh sign-in (aal 2 once MFA is on), except the password
            // change (its own proof, step-up once MFA is on) and provider linking (or the password).
            CommandCase(TokenV1.ChangePassword(appId: app, uid: uid, sessionId: session, currentPassword: password,
                                               newPassword: "a new password 123"),
                        actsFor: own, wayIn: .some(.stepUpWhenMfaOn)),
            CommandCase(TokenV1.LinkIdentity(appId: app, uid: uid, sessionId: session, password: password),
                        actsFor: own, wayIn: .some(.freshSignInOrPassword(password))),
            CommandCase(TokenV1.UnlinkIdentity(appId: app, uid: uid, provider: "google", sessionId: session),
                        actsFor: own, wayIn: fresh),
            CommandCase(TokenV1.PasskeyRegistrationOptions(appId: app, uid: uid, sessionId: session), actsFor: own,
                        wayIn: fresh),
            CommandCase(TokenV1.FinishPasskeyRegistration(appId: app, uid: uid, sessionId: session, responseJson: "{}"),
                        actsFor: own, wayIn: fresh),
            CommandCase(TokenV1.RenamePasskey(appId: app, uid: uid, sessionId: session, passkeyId: "pk_x", name: "Mine"),
                        actsFor: own, wayIn: fresh),
            CommandCase(TokenV1.DeletePasskey(appId: app, uid: uid, sessionId: session, passkeyId: "pk_x"),
                        actsFor: own, wayIn: fresh),
            CommandCase(TokenV1.SendPhoneCode(appId: app, phone: "+33612345678", uid: uid, sessionId: session),
                        actsFor: own, wayIn: fresh),
            CommandCase(TokenV1.LinkPhone(appId: app, uid: uid, sessionId: session, phoneSessionId: "phs_x", code: "123456"),
                        actsFor: own, wayIn: fresh),
            CommandCase(TokenV1.StartMfaEnrolment(appId: app, uid: uid, sessionId: session, method: "totp"),
                        actsFor: own, wayIn: fresh),
            CommandCase(TokenV1.ConfirmMfaEnrolment(appId: app, uid: uid, sessionId: session, method: "totp", code: "123456"),
                        actsFor: own, wayIn: fresh),
            CommandCase(TokenV1.RegenerateBackupCodes(appId: app, uid: uid, sessionId: session), actsFor: own, wayIn: fresh),
            CommandCase(TokenV1.DisableMfa(appId: app, uid: uid, sessionId: session, code: "123456"), actsFor: own,
                        wayIn: fresh),
            // The admin API: the app's backend, by its secret key.
            CommandCase(AdminV1.RotateSecretKey(appId: app, actor: "test"), appBackend: true),
            CommandCase(AdminV1.ImportUsers(appId: app, usersJson: "[]", actor: "test"), appBackend: true),
            CommandCase(AdminV1.RotateSigningKey(appId: app, alg: "ES256", actor: "test"), appBackend: true),
            CommandCase(AdminV1.CreateUser(appId: app, email: "admin-made@example.com", actor: "test"), appBackend: true),
            CommandCase(AdminV1.UpdateUser(appId: app, uid: uid, firstName: "Ann", actor: "test"), appBackend: true),
            CommandCase(AdminV1.SetUserDisabled(appId: app, uid: uid, disabled: true, actor: "test"), appBackend: true),
            CommandCase(AdminV1.DeleteUser(appId: app, uid: uid, actor: "test"), appBackend: true),
            CommandCase(AdminV1.UpdateAppSettings(appId: app, settingsJson: "{}", actor: "test"), appBackend: true),
            CommandCase(AdminV1.ResetUserMfa(appId: app, uid: uid, actor: "test"), appBackend: true),
            CommandCase(AdminV1.ListUserPasskeys(appId: app, uid: uid), appBackend: true),
            CommandCase(AdminV1.ManageWebhooks(appId: app, actor: "test", action: "list"), appBackend: true),
            CommandCase(AdminV1.ListAuthHooks(appId: app, actor: "test"), appBackend: true),
            CommandCase(AdminV1.SaveAuthHook(appId: app, kind: "before_token", url: "https://hooks.example.com/t", actor: "test"),
                        appBackend: true),
            CommandCase(AdminV1.DeleteAuthHook(appId: app, kind: "before_token", actor: "test"), appBackend: true),
            // The console's Members page: an owner's console session, never a user's or a secret key.
            CommandCase(AdminV1.InviteConsoleMember(appId: app, consoleUid: "usr_console", email: "new@example.com", role: "viewer"),
                        consoleOwner: true),
            CommandCase(AdminV1.ChangeConsoleMemberRole(appId: app, consoleUid: "usr_console", email: "new@example.com",
                                                        role: "admin"), consoleOwner: true),
            CommandCase(AdminV1.RemoveConsoleMember(appId: app, consoleUid: "usr_console", email: "new@example.com"),
                        consoleOwner: true),
            // An invitation link's page and acceptance: the link's token is their only authority.
            CommandCase(AdminV1.ReadConsoleInvitation(token: "a-token")),
            CommandCase(AdminV1.AcceptConsoleInvitation(token: "a-token", password: "a long passphrase")),
        ]
    }
}

final class CommandCatalogueTests: XCTestCase {
    /// The command messages a .proto file documents: those whose comment names the reply
    /// (`→ Reply`), and `Ping` ("a command that does nothing"); replies and parts are not.
    static func documentedCommands(in relativePath: String, package: String) throws -> Set<String> {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let text = try String(contentsOf: root.appendingPathComponent(relativePath), encoding: .utf8)
        var commands: Set<String> = []
        var comment: [Substring] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("//") {
                comment.append(line)
            } else if line.hasPrefix("message ") {
                let name = String(line.dropFirst("message ".count).prefix { $0 != " " && $0 != "{" })
                let said = comment.joined(separator: " ")
                if said.contains("→") || said.lowercased().contains("a command") { commands.insert(package + "." + name) }
                comment = []
            } else {
                comment = []
            }
        }
        return commands
    }

    func testTheCatalogueIsEveryDocumentedCommand() throws {
        let documented = try Self.documentedCommands(in: "proto/identity/token/v1/token.proto", package: "identity.token.v1")
            .union(Self.documentedCommands(in: "proto/identity/admin/v1/admin.proto", package: "identity.admin.v1"))
            .union(Self.documentedCommands(in: "proto/identity/admin/v1/signing_keys_import.proto",
                                           package: "identity.admin.v1"))
            .union(Self.documentedCommands(in: "proto/identity/admin/v1/auth_hooks.proto", package: "identity.admin.v1"))
            .union(Self.documentedCommands(in: "proto/identity/admin/v1/console_members.proto", package: "identity.admin.v1"))
        // The parse finds the files' commands (and not their replies): a change of the comment
        // style must not leave this test comparing two empty sets.
        XCTAssertGreaterThanOrEqual(documented.count, 45)
        XCTAssertTrue(documented.contains(TokenV1.Ping.protoName))
        XCTAssertFalse(documented.contains(TokenV1.AuthResult.protoName))
        XCTAssertFalse(documented.contains(AdminV1.SecretKeyRotated.protoName))
        let catalogued = Set(CommandCase.catalogue().map(\.type))
        XCTAssertEqual(documented.subtracting(catalogued), [], "documented commands missing from CommandCase.catalogue")
        XCTAssertEqual(catalogued.subtracting(documented), [], "catalogued types the protos do not document as commands")
    }

    func testActsForUserConformances() {
        for item in CommandCase.catalogue() {
            let acting = item.command as? ActsForUser
            guard let expected = item.actsFor else {
                XCTAssertNil(acting, "\(item.type) must not act for a user: its authority is its own content")
                continue
            }
            guard let acting else { XCTFail("\(item.type) acts for a user: it must conform to ActsForUser"); continue }
            XCTAssertEqual(acting.appId, "app_test", item.type)
            XCTAssertEqual(acting.actingUid, expected.uid, item.type)
            XCTAssertEqual(acting.actingSessionId, expected.session, item.type)
        }
        // The user's commands and the guest upgrades, counted by type: a new command that acts
        // for a user belongs in the catalogue with its expectation.
        let acting = Set(CommandCase.catalogue().filter { $0.actsFor != nil }.map(\.type))
        XCTAssertEqual(acting.count, 27, acting.sorted().description)
    }

    func testChangesWayInConformancesAndTheirRules() {
        for item in CommandCase.catalogue() {
            let change = item.command as? ChangesWayIn
            switch item.wayIn {
            case .none:
                XCTAssertNil(change, "\(item.type) changes no way in")
            case .some(let rule):
                guard let change else { XCTFail("\(item.type) changes a way in: it must conform to ChangesWayIn"); continue }
                XCTAssertEqual(change.freshProof, rule, item.type)
                // A way-in change acts for the user whose way in it changes.
                XCTAssertEqual(change.actingUid, item.actsFor?.uid, item.type)
            }
        }
        let changes = Set(CommandCase.catalogue().filter { $0.wayIn != nil }.map(\.type))
        XCTAssertEqual(changes, [
            TokenV1.ChangePassword.protoName, TokenV1.LinkIdentity.protoName, TokenV1.UnlinkIdentity.protoName,
            TokenV1.PasskeyRegistrationOptions.protoName, TokenV1.FinishPasskeyRegistration.protoName,
            TokenV1.RenamePasskey.protoName, TokenV1.DeletePasskey.protoName, TokenV1.SendPhoneCode.protoName,
            TokenV1.LinkPhone.protoName, TokenV1.StartMfaEnrolment.protoName, TokenV1.ConfirmMfaEnrolment.protoName,
            TokenV1.RegenerateBackupCodes.protoName, TokenV1.DisableMfa.protoName,
            // Not a way in, but its own proof (a password, provider token or guest secret) is one
            // factor: with MFA on the session must be fresh at aal 2 too.
            TokenV1.DeleteAccount.protoName, TokenV1.StartEmailChange.protoName,
        ])
    }

    /// The rule of a provider link follows the command's password; a phone code sent for
    /// sign-in changes nothing, one sent to link the number does.
    func testRulesThatDependOnTheCommand() {
        XCTAssertEqual(TokenV1.LinkIdentity(appId: "a", uid: "u", sessionId: "s").freshProof, .freshSignInOrPassword(nil))
        XCTAssertEqual(TokenV1.LinkIdentity(appId: "a", uid: "u", sessionId: "s", password: "pw").freshProof,
                       .freshSignInOrPassword("pw"))
        XCTAssertNil(TokenV1.SendPhoneCode(appId: "a", phone: "+33612345678").freshProof)
        XCTAssertEqual(TokenV1.SendPhoneCode(appId: "a", phone: "+33612345678", uid: "u").freshProof, .freshSignIn)
        XCTAssertEqual(TokenV1.ChangePassword(appId: "a", uid: "u").freshProof, .stepUpWhenMfaOn)
    }

    func testAdminCommandsActForTheAppBackendOnly() {
        for item in CommandCase.catalogue() {
            let backend = item.command as? ActsForAppBackend
            if item.appBackend {
                XCTAssertEqual(backend?.appId, "app_test", "\(item.type) must conform to ActsForAppBackend")
                XCTAssertNil(item.command as? ActsForUser, "\(item.type): the backend's authority, not a user's")
                XCTAssertTrue(item.type.hasPrefix("identity.admin.v1."), item.type)
            } else {
                XCTAssertNil(backend, "\(item.type) is not an admin command")
            }
        }
        XCTAssertEqual(CommandCase.catalogue().filter(\.appBackend).count, 14)
    }

    func testConsoleMemberChangesNeedAConsoleOwnerAndNameTheirAuditAction() {
        for item in CommandCase.catalogue() {
            let owner = item.command as? ActsForConsoleOwner
            if item.consoleOwner {
                XCTAssertEqual(owner?.appId, "app_test", "\(item.type) must conform to ActsForConsoleOwner")
                XCTAssertEqual(owner?.consoleUid, "usr_console", item.type)
                XCTAssertNil(item.command as? ActsForUser, item.type)
                XCTAssertNil(item.command as? ActsForAppBackend, "\(item.type): a console owner's, not the app backend's")
            } else {
                XCTAssertNil(owner, "\(item.type) is no console member change")
            }
        }
        XCTAssertEqual(AdminV1.InviteConsoleMember.auditAction, "console.members.invite")
        XCTAssertEqual(AdminV1.ChangeConsoleMemberRole.auditAction, "console.members.role_change")
        XCTAssertEqual(AdminV1.RemoveConsoleMember.auditAction, "console.members.remove")
    }
}

/// The router itself, on a database it cannot reach: what it answers shows which commands it
/// decoded, and which checks ran before any flow (the caller's authority needs no database to
/// be refused when the message carries no token).
final class CommandRouterTests: XCTestCase {
    private var parts: WorkerParts!

    override func setUpWithError() throws { parts = try WorkerParts.unreachable() }
    override func tearDown() { parts = nil }

    /// What an unknown type gets: the catch-all reply every documented command must avoid.
    private func unknownReply() -> CommandConsumer.Reply {
        parts.router.handle(BusMessage(type: "identity.token.v1.NoSuchCommand", body: Data("{}".utf8)))
    }

    func testAnUnknownTypeIsAnsweredAsInternal() {
        XCTAssertEqual(unknownReply().errorCode, ServiceError.internal.code)
        XCTAssertEqual(parts.router.handle(BusMessage(type: "identity.token.v1.SignIn.Extra", body: Data("{}".utf8)))
            .errorCode, ServiceError.internal.code)
    }

    func testEveryDocumentedCommandIsAnswered() throws {
        let unknown = unknownReply()
        for item in CommandCase.catalogue() {
            let reply = parts.router.handle(try item.message())
            XCTAssertFalse(reply.type == unknown.type && reply.body == unknown.body,
                           "\(item.type) is answered as an unknown command")
            XCTAssertNotEqual(reply.errorCode, ServiceError.internal.code, item.type)
        }
    }

    func testPingIsAnsweredWithPongNamingTheWorker() throws {
        let reply = parts.router.handle(try CommandCase(TokenV1.Ping(appId: "app_test")).message())
        XCTAssertEqual(reply.type, TokenV1.Pong.protoName)
        XCTAssertEqual(try ProtoJSON.decode(TokenV1.Pong.self, from: reply.body).worker, "tests:1")
    }

    /// Without the user's access token, a command naming a user is refused before its flow;
    /// so is an admin command without the app's secret key.
    func testCommandsActingForSomeoneAreRefusedWithoutTheirCredential() throws {
        for item in CommandCase.catalogue() where item.appBackend || item.consoleOwner || !(item.actsFor?.uid.isEmpty ?? true) {
            XCTAssertEqual(parts.router.handle(try item.message()).errorCode, ServiceError.invalidToken.code, item.type)
            XCTAssertEqual(parts.router.handle(try item.message(appId: "app_test", callerToken: "not-a-token")).errorCode,
                           item.appBackend || item.consoleOwner ? ServiceError.invalidToken.code : ServiceError.unavailable.code,
                           "\(item.type): a token is checked against the store")
        }
    }

    /// A message of one app carrying a command for another is refused whatever its token.
    func testACommandForAnotherAppThanItsMessageIsRefused() throws {
        for item in CommandCase.catalogue() where !(item.actsFor?.uid.isEmpty ?? true) {
            XCTAssertEqual(parts.router.handle(try item.message(appId: "app_other", callerToken: "some-token")).errorCode,
                           ServiceError.invalidToken.code, item.type)
        }
    }
}

/// The router against the real store: a user's token passes the authority check, and then
/// every way-in change meets the fresh proof its rule declares, before its flow runs.
final class CommandRouterFreshProofTests: XCTestCase {
    private var db: TestDatabase!
    private let password = "correct horse battery"

    override func setUpWithError() throws { db = try TestDatabase() }
    override func tearDown() { db = nil }

    /// Commands whose own flow answers with the codes looked at here, whatever the router did:
    /// the account deletion checks its own proof (a wrong password is 403 reauth-required), and
    /// a session token is refused (401 invalid-token) to an app whose profile has none.
    private static let ownAnswers: Set<String> = [TokenV1.DeleteAccount.protoName, TokenV1.IssueSessionToken.protoName]

    private func replies(for user: UserRecord, session: String, aal: Int) throws -> [(CommandCase, String?)] {
        let token = try db.accessToken(for: user, sessionId: session, aal: aal)
        return try CommandCase.catalogue(app: db.app.id, uid: user.uid, session: session, password: "not the password")
            .filter { !($0.actsFor?.uid.isEmpty ?? true) }
            .filter { !Self.ownAnswers.contains($0.type) }
            .map { item in (item, db.parts.router.handle(try item.message(appId: db.app.id, callerToken: token)).errorCode) }
    }

    func testAnOldSessionCannotChangeAWayIn() throws {
        let user = try db.insertUser(email: "old@example.com", password: password)
        let old = try db.session(for: user, ageSeconds: 600)
        var refused = 0
        for (item, code) in try replies(for: user, session: old, aal: 1) {
            XCTAssertNotEqual(code, ServiceError.invalidToken.code, "\(item.type): the user's own token passes")
            switch item.wayIn {
            case .some(.some(.stepUpWhenMfaOn)):
                XCTAssertNotEqual(code, ServiceError.reauthRequired.code, "\(item.type): MFA off, its own proof decides")
            case .some(.some(_)):
                XCTAssertEqual(code, ServiceError.reauthRequired.code, "\(item.type) from a 10-minute-old session")
                refused += 1
            default:
                XCTAssertNotEqual(code, ServiceError.reauthRequired.code, "\(item.type) needs no fresh sign-in")
            }
        }
        XCTAssertEqual(refused, 13, "every way-in change but the password change")
    }

    func testWithMfaOnAFreshAal1SessionCannotChangeAWayIn() throws {
        let user = try db.insertUser(email: "aal1@example.com", password: password)
        try db.enableTOTP(for: user)
        let fresh = try db.session(for: user, aal: 1)
        var refused = 0
        for (item, code) in try replies(for: user, session: fresh, aal: 1) {
            if case .some(.some(_)) = item.wayIn {
                XCTAssertEqual(code, ServiceError.reauthRequired.code, "\(item.type) at aal 1 with MFA on")
                refused += 1
            }
        }
        XCTAssertEqual(refused, 14, "every way-in change, the password change included")
    }

    func testAFreshSessionAtTheRightLevelPassesTheProof() throws {
        let user = try db.insertUser(email: "fresh@example.com", password: password)
        for (item, code) in try replies(for: user, session: try db.session(for: user, aal: 1), aal: 1) {
            XCTAssertNotEqual(code, ServiceError.reauthRequired.code, "\(item.type), MFA off, fresh session")
        }
        try db.enableTOTP(for: user)
        let aal2 = try db.session(for: user, aal: 2, amr: ["pwd", "otp", "mfa"])
        for (item, code) in try replies(for: user, session: aal2, aal: 2) {
            XCTAssertNotEqual(code, ServiceError.reauthRequired.code, "\(item.type), MFA on, fresh aal-2 session")
        }
    }
}
