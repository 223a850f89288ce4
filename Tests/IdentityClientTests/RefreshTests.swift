import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import IdentityClient

/// The single-flight refresh (seed 000's `Session` helper, done right), against a stubbed transport.
final class RefreshTests: XCTestCase {
    let baseURL = URL(string: "https://id.example.test")!

    func client(_ storage: InMemoryTokenStorage = InMemoryTokenStorage()) -> IdentityClient {
        IdentityClient(baseURL: baseURL, appKey: "pk_test", storage: storage, session: StubProtocol.session())
    }

    /// Signed in with access token `at1` and refresh token `rt1`; `/v1/me` accepts only `at2`.
    func signedIn(_ client: IdentityClient, refresh: @escaping @Sendable (StubProtocol.Seen) -> StubProtocol.Stubbed) async throws {
        StubProtocol.install { seen in
            switch (seen.method, seen.path) {
            case ("POST", "/v1/auth/sign-in"): return Answers.tokens(access: "at1", refresh: "rt1")
            case ("POST", "/v1/auth/token/refresh"): return refresh(seen)
            case ("GET", "/v1/me"):
                return seen.bearer == "at2" ? Answers.data(Answers.user()) : Answers.problem(401, "auth/token-expired")
            default: return Answers.problem(404, "auth/not-found")
            }
        }
        let result = try await client.signIn(email: "jane@example.com", password: "a long passphrase")
        XCTAssertEqual(result.user?.uid, "01j9x6k3m4q5r6s7t8v9w0x1y2")
    }

    func testHundredConcurrentCallsWithAnExpiredTokenMakeOneRefresh() async throws {
        let storage = InMemoryTokenStorage()
        let client = client(storage)
        try await signedIn(client) { seen in
            var answer = seen.json?["refresh_token"] as? String == "rt1"
                ? Answers.tokens(access: "at2", refresh: "rt2") : Answers.problem(401, "auth/refresh-token-revoked")
            answer.delay = 0.2 // long enough for every call to find its token refused while it runs
            return answer
        }
        let users = try await withThrowingTaskGroup(of: User.self) { group in
            for _ in 0..<100 { group.addTask { try await client.me() } }
            return try await group.reduce(into: [User]()) { $0.append($1) }
        }
        XCTAssertEqual(users.count, 100)
        let refreshes = StubProtocol.requests.filter { $0.path == "/v1/auth/token/refresh" }
        XCTAssertEqual(refreshes.count, 1, "one refresh for 100 calls")
        XCTAssertEqual(StubProtocol.requests.filter { $0.path == "/v1/me" && $0.bearer == "at2" }.count, 100)
        let stored = await storage.read(TokenStorageKey.refreshToken)
        XCTAssertEqual(stored, "rt2")
    }

    func testACallRefusedAfterTheRefreshFinishedUsesTheNewTokenWithoutRefreshingAgain() async throws {
        let client = client()
        try await signedIn(client) { _ in Answers.tokens(access: "at2", refresh: "rt2") }
        _ = try await client.me() // refreshes once
        // A refresh that another caller already finished: "replacing at1" gives at2 without a request.
        let token = try await client.keeper.freshAccessToken(replacing: "at1")
        XCTAssertEqual(token, "at2")
        XCTAssertEqual(StubProtocol.requests.filter { $0.path == "/v1/auth/token/refresh" }.count, 1)
    }

    func testARevokedRefreshTokenClearsStorageAndSignsOut() async throws {
        let storage = InMemoryTokenStorage()
        let client = client(storage)
        try await signedIn(client) { _ in Answers.problem(401, "auth/refresh-token-revoked") }
        let states = client.authStates  // starts with the present state: signed in
        do {
            _ = try await client.me()
            XCTFail("me() succeeded with a revoked session")
        } catch let error as IdentityError {
            XCTAssertEqual(error.code, .refreshTokenRevoked)
            XCTAssertEqual(error.status, 401)
        }
        let stored = await storage.read(TokenStorageKey.refreshToken)
        XCTAssertNil(stored)
        let signedInNow = await client.isSignedIn
        XCTAssertFalse(signedInNow)
        var iterator = states.makeAsyncIterator()
        let first = await iterator.next()
        let second = await iterator.next()
        guard case .signedIn? = first else { return XCTFail("first state \(String(describing: first))") }
        XCTAssertEqual(second, .signedOut)
        // Signed out: the next authorized call does not reach the network.
        let before = StubProtocol.requests.count
        do {
            _ = try await client.me()
            XCTFail("me() succeeded signed out")
        } catch IdentityClientError.notSignedIn {}
        XCTAssertEqual(StubProtocol.requests.count, before)
    }

    func testALostRefreshAnswerIsRetriedOnceWithTheSameToken() async throws {
        let storage = InMemoryTokenStorage()
        let client = client(storage)
        let attempts = Counter()
        try await signedIn(client) { _ in
            attempts.increment() == 1 ? StubProtocol.Stubbed(status: 0, failure: .networkConnectionLost)
                                      : Answers.tokens(access: "at2", refresh: "rt2")
        }
        _ = try await client.me()
        let refreshes = StubProtocol.requests.filter { $0.path == "/v1/auth/token/refresh" }
        XCTAssertEqual(refreshes.map { $0.json?["refresh_token"] as? String }, ["rt1", "rt1"])
        let stored = await storage.read(TokenStorageKey.refreshToken)
        XCTAssertEqual(stored, "rt2")
    }

    func testATransportErrorTwiceSurfacesAndKeepsTheSession() async throws {
        let storage = InMemoryTokenStorage()
        let client = client(storage)
        try await signedIn(client) { _ in StubProtocol.Stubbed(status: 0, failure: .timedOut) }
        do {
            _ = try await client.me()
            XCTFail("me() succeeded")
        } catch is URLError {}
        XCTAssertEqual(StubProtocol.requests.filter { $0.path == "/v1/auth/token/refresh" }.count, 2)
        let stored = await storage.read(TokenStorageKey.refreshToken)
        XCTAssertEqual(stored, "rt1", "a transport failure is no reason to sign out")
    }

    func testRestartRefreshesFromTheStoredTokenBeforeTheFirstCall() async throws {
        let storage = InMemoryTokenStorage()
        await storage.write(TokenStorageKey.refreshToken, value: "rt1")
        let client = client(storage)
        StubProtocol.install { seen in
            switch seen.path {
            case "/v1/auth/token/refresh": return Answers.tokens(access: "at2", refresh: "rt2")
            case "/v1/me": return seen.bearer == "at2" ? Answers.data(Answers.user()) : Answers.problem(401, "auth/invalid-token")
            default: return Answers.problem(404, "auth/not-found")
            }
        }
        _ = try await client.me()
        XCTAssertEqual(StubProtocol.requests.map(\.path), ["/v1/auth/token/refresh", "/v1/me"])
    }

    func testGuestSignInUsesOneStoredSecretAndAnUpgradeCarriesTheGuestTokenThenForgetsTheSecret() async throws {
        let storage = InMemoryTokenStorage()
        let client = client(storage)
        StubProtocol.install { seen in
            switch seen.path {
            case "/v1/auth/guest": return Answers.tokens(access: "guest-at", refresh: "guest-rt", isGuest: true)
            case "/v1/auth/sign-up":
                return seen.bearer == "guest-at" ? Answers.tokens(access: "at", refresh: "rt", status: 201)
                                                 : Answers.problem(401, "auth/invalid-token")
            default: return Answers.problem(404, "auth/not-found")
            }
        }
        let guest = try await client.signInAsGuest()
        XCTAssertTrue(guest.isGuest)
        _ = try await client.signInAsGuest()
        let secrets = StubProtocol.requests.filter { $0.path == "/v1/auth/guest" }.map { $0.json?["secret"] as? String }
        XCTAssertEqual(secrets.count, 2)
        XCTAssertEqual(secrets[0], secrets[1])
        XCTAssertEqual(secrets[0]?.count, 43, "256 bits, base64url without padding")
        let result = try await client.signUp(email: "jane@example.com", password: "a long passphrase")
        guard case .signedIn(let user, let isNew) = result else { return XCTFail("\(result)") }
        XCTAssertEqual(user.uid, guest.uid)
        XCTAssertTrue(isNew)
        let secret = await storage.read(TokenStorageKey.guestSecret)
        XCTAssertNil(secret, "the upgraded guest's secret is forgotten")
    }

    func testMFAChallengeThenVerify() async throws {
        let client = client()
        StubProtocol.install { seen in
            switch seen.path {
            case "/v1/auth/sign-in":
                return Answers.data(["mfa": ["challenge_token": "mfa_1", "expires_at": "2026-09-27T10:20:00.000000Z",
                                             "methods": ["totp", "backup_code"]]], status: 202)
            case "/v1/auth/mfa/verify":
                return seen.json?["challenge_token"] as? String == "mfa_1" && seen.json?["code"] as? String == "123456"
                    ? Answers.tokens(access: "at", refresh: "rt") : Answers.problem(401, "auth/invalid-code")
            default: return Answers.problem(404, "auth/not-found")
            }
        }
        let result = try await client.signIn(email: "jane@example.com", password: "a long passphrase")
        guard case .mfaRequired(let challenge) = result else { return XCTFail("\(result)") }
        XCTAssertEqual(challenge.methods, ["totp", "backup_code"])
        let signedInBefore = await client.isSignedIn
        XCTAssertFalse(signedInBefore)
        do {
            _ = try await client.verifyMFA(challenge, code: "000000")
            XCTFail("wrong code accepted")
        } catch let error as IdentityError {
            XCTAssertEqual(error.code, .invalidCode)
        }
        let user = try await client.verifyMFA(challenge, code: "123456")
        XCTAssertEqual(user.firstName, "Jane")
        let signedInAfter = await client.isSignedIn
        XCTAssertTrue(signedInAfter)
    }
}

/// A thread-safe counter for stub handlers.
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 0

    /// The value after incrementing.
    func increment() -> Int {
        lock.lock(); defer { lock.unlock() }
        value += 1
        return value
    }
}
