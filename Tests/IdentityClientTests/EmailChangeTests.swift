import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import IdentityClient

/// `startEmailChange(to:)` and `confirmEmailChange(code:)` against a stubbed transport:
/// the requests they send and how the answers and refusals come back.
final class EmailChangeTests: XCTestCase {
    static let newEmail = "jane.new+x@example.com"

    /// Signed in with access token `at1`; `change` answers the email-change routes.
    func signedIn(_ storage: InMemoryTokenStorage = InMemoryTokenStorage(),
                  change: @escaping @Sendable (StubProtocol.Seen) -> StubProtocol.Stubbed) async throws -> IdentityClient {
        let client = IdentityClient(baseURL: URL(string: "https://id.example.test")!, appKey: "pk_test", storage: storage,
                                    session: StubProtocol.session())
        StubProtocol.install { seen in
            switch (seen.method, seen.path) {
            case ("POST", "/v1/auth/sign-in"): return Answers.tokens(access: "at1", refresh: "rt1")
            case ("POST", "/v1/me/email/change"), ("POST", "/v1/me/email/change/confirm"): return change(seen)
            default: return Answers.problem(404, "auth/not-found")
            }
        }
        _ = try await client.signIn(email: "jane@example.com", password: "a long passphrase")
        return client
    }

    func changeRequests() -> [StubProtocol.Seen] {
        StubProtocol.requests.filter { $0.path.hasPrefix("/v1/me/email/change") }
    }

    func testStartSendsTheNewAddressWithTheBearerAndReturnsTheCodesLifetime() async throws {
        let client = try await signedIn { _ in Answers.data(["expires_in": 600], status: 202) }
        let lifetime = try await client.startEmailChange(to: Self.newEmail)
        XCTAssertEqual(lifetime, 600)
        let sent = try XCTUnwrap(changeRequests().first)
        XCTAssertEqual(changeRequests().count, 1)
        XCTAssertEqual(sent.method, "POST")
        XCTAssertEqual(sent.path, "/v1/me/email/change")
        XCTAssertEqual(sent.bearer, "at1")
        XCTAssertEqual(sent.headers.first { $0.key.lowercased() == "x-app-key" }?.value, "pk_test")
        XCTAssertEqual(sent.json?.count, 1)
        XCTAssertEqual(sent.json?["email"] as? String, Self.newEmail)
    }

    func testConfirmSendsTheAddressAndCodeAndDecodesTheUser() async throws {
        let storage = InMemoryTokenStorage()
        var changed = Answers.user()
        changed["email"] = Self.newEmail
        changed["email_verified"] = true
        let answer = Answers.data(changed)
        let client = try await signedIn(storage) { _ in answer }
        let confirmed = try await client.confirmEmailChange(code: "123456")
        XCTAssertEqual(confirmed.uid, "01j9x6k3m4q5r6s7t8v9w0x1y2")
        XCTAssertEqual(confirmed.email, Self.newEmail)
        XCTAssertTrue(confirmed.emailVerified)
        let sent = try XCTUnwrap(changeRequests().first)
        XCTAssertEqual(changeRequests().count, 1)
        XCTAssertEqual(sent.method, "POST")
        XCTAssertEqual(sent.path, "/v1/me/email/change/confirm")
        XCTAssertEqual(sent.bearer, "at1")
        XCTAssertEqual(sent.json?.count, 1)
        XCTAssertEqual(sent.json?["code"] as? String, "123456")
        // This session stays: the client keeps its tokens.
        let stored = await storage.read(TokenStorageKey.refreshToken)
        XCTAssertEqual(stored, "rt1")
    }

    func testRefusalsAreIdentityErrorsAndNoneTriggersARefresh() async throws {
        let cases: [(Int, String, IdentityError.Code, Bool)] = [
            (403, "auth/reauth-required", .reauthRequired, true),
            (422, "auth/invalid-email", .invalidEmail, true),
            (409, "auth/email-already-in-use", .emailAlreadyInUse, false),
            (401, "auth/invalid-code", .invalidCode, false),
            (429, "auth/rate-limited", .rateLimited, false),
        ]
        for (status, raw, code, atStart) in cases {
            let client = try await signedIn { _ in Answers.problem(status, raw) }
            do {
                if atStart {
                    try await client.startEmailChange(to: Self.newEmail)
                } else {
                    _ = try await client.confirmEmailChange(code: "000000")
                }
                XCTFail("\(raw): no error")
            } catch let error as IdentityError {
                XCTAssertEqual(error.code, code, raw)
                XCTAssertEqual(error.status, status, raw)
            }
            XCTAssertEqual(changeRequests().count, 1, raw)
            XCTAssertEqual(StubProtocol.requests.filter { $0.path == "/v1/auth/token/refresh" }.count, 0, raw)
            let signedInNow = await client.isSignedIn
            XCTAssertTrue(signedInNow, raw)
        }
    }

    func testSignedOutSendsNothing() async throws {
        StubProtocol.install { _ in Answers.problem(500, "auth/internal") }
        let client = IdentityClient(baseURL: URL(string: "https://id.example.test")!, appKey: "pk_test",
                                    storage: InMemoryTokenStorage(), session: StubProtocol.session())
        do {
            try await client.startEmailChange(to: Self.newEmail)
            XCTFail("started while signed out")
        } catch IdentityClientError.notSignedIn {}
        do {
            _ = try await client.confirmEmailChange(code: "123456")
            XCTFail("confirmed while signed out")
        } catch IdentityClientError.notSignedIn {}
        XCTAssertEqual(StubProtocol.requests.count, 0)
    }
}
