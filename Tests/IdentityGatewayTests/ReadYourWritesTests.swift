import XCTest
@testable import IdentityGateway
@testable import IdentityKit

/// Which command answers go without waiting for this replica to hear the store
/// (`CommandSender.answersAtOnce`, from `only_adds_sessions` in proto/): the successes of the
/// sign-ins and the refresh, and nothing that may end a session or change a user.
final class ReadYourWritesTests: XCTestCase {
    func testSignInsAndRefreshSucceedAtOnce() {
        for command in [TokenV1.SignIn.protoName, TokenV1.Refresh.protoName, TokenV1.GuestSignIn.protoName,
                        TokenV1.VerifyPasskey.protoName, TokenV1.VerifyMfa.protoName] {
            XCTAssertTrue(CommandSender.answersAtOnce(command, status: 200), command)
        }
        // The MFA challenge of a sign-in is a success too.
        XCTAssertTrue(CommandSender.answersAtOnce(TokenV1.SignIn.protoName, status: 202))
    }

    /// A refused refresh may have ended its session (a reused token, the absolute lifetime), a
    /// timed-out one may still commit: they wait like every other answer.
    func testRefusalsWait() {
        for status in [401, 403, 409, 429, 503] {
            XCTAssertFalse(CommandSender.answersAtOnce(TokenV1.Refresh.protoName, status: status), "\(status)")
            XCTAssertFalse(CommandSender.answersAtOnce(TokenV1.SignIn.protoName, status: status), "\(status)")
        }
    }

    /// Ending sessions, changing users, and the flows that may upgrade the caller's guest.
    func testWhatMayChangeAHeldReadWaits() {
        for command in [RevocationV1.EndSession.protoName, RevocationV1.EndAllSessions.protoName,
                        AdminV1.SetUserDisabled.protoName, AdminV1.DeleteUser.protoName, AdminV1.UpdateUser.protoName,
                        TokenV1.DeleteAccount.protoName, TokenV1.ChangePassword.protoName, TokenV1.ResetPassword.protoName,
                        TokenV1.UpdateProfile.protoName, TokenV1.SignUp.protoName, TokenV1.ProviderSignIn.protoName,
                        TokenV1.VerifyEmailCode.protoName, TokenV1.IssueSessionToken.protoName] {
            XCTAssertFalse(CommandSender.answersAtOnce(command, status: 200), command)
        }
    }

    /// The flag is a promise about every operation that sends the command.
    func testEveryOperationOfAnAtOnceCommandDeclaresIt() {
        XCTAssertFalse(DeclaredOperation.commandsOnlyAddingSessions.isEmpty)
        for operation in DeclaredOperation.all {
            guard let command = operation.command, DeclaredOperation.commandsOnlyAddingSessions.contains(command) else { continue }
            XCTAssertTrue(operation.onlyAddsSessions, operation.id)
            XCTAssertEqual(operation.access, .appKey, operation.id)
        }
    }
}

/// Introspection renders a live token's answer once (`LiveTokenAnswers`), for that token of that
/// app and issuer only.
final class LiveTokenAnswersTests: XCTestCase {
    private let app = AppRecord(id: "app_1", name: "Acme", appKey: "pk_1", issuer: "https://id.example.com/v1/apps/app_1",
                                accessTokenTTL: 900)

    func testAnAnswerIsRenderedOncePerTokenAppAndIssuer() {
        let answers = LiveTokenAnswers()
        var renders = 0
        let render = { () -> JSONValue in
            renders += 1
            return .object(["active": .bool(true), "n": JSONValue(renders)])
        }
        let first = answers.answer(token: "t1", app: app, render: render)
        XCTAssertEqual(first.status, 200)
        XCTAssertEqual(first.headers.first { $0.0 == "Content-Type" }?.1, "application/json")
        XCTAssertEqual(answers.answer(token: "t1", app: app, render: render).body, first.body)
        XCTAssertEqual(renders, 1)
        _ = answers.answer(token: "t2", app: app, render: render)
        XCTAssertEqual(renders, 2)
        let other = AppRecord(id: "app_2", name: "Other", appKey: "pk_2", issuer: app.issuer, accessTokenTTL: 900)
        XCTAssertNotEqual(answers.answer(token: "t1", app: other, render: render).body, first.body)
        let moved = AppRecord(id: app.id, name: app.name, appKey: app.appKey, issuer: "https://new.example.com/v1/apps/app_1",
                              accessTokenTTL: 900)
        _ = answers.answer(token: "t1", app: moved, render: render)
        XCTAssertEqual(renders, 4)
    }
}
