import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import IdentityClient

/// Refresh ahead of expiry, the auth states' first value, currentUser and currentSession,
/// against the stubbed transport and a clock the test moves.
final class SessionStateTests: XCTestCase {
    let baseURL = URL(string: "https://id.example.test")!
    let clock = TestClock()

    func client(_ storage: InMemoryTokenStorage = InMemoryTokenStorage()) -> IdentityClient {
        IdentityClient(baseURL: baseURL, appKey: "pk_test", storage: storage, session: StubProtocol.session(),
                       userAgent: nil, clock: clock.now)
    }

    /// Access tokens `jwt-1`, `jwt-2`, … are JWTs issued at the test clock's time, living an hour.
    func install(refresh: @escaping @Sendable (StubProtocol.Seen) -> StubProtocol.Stubbed? = { _ in nil }) {
        let issued = Counter()
        let clock = clock
        StubProtocol.install { seen in
            switch seen.path {
            case "/v1/auth/sign-in":
                return Answers.tokens(access: Answers.jwt(sid: "ses_1", iat: clock.now(), lifetime: 3600, serial: issued.increment()),
                                      refresh: "rt1")
            case "/v1/auth/token/refresh":
                if let answer = refresh(seen) { return answer }
                return Answers.tokens(access: Answers.jwt(sid: "ses_1", iat: clock.now(), lifetime: 3600, serial: issued.increment()),
                                      refresh: "rt\(issued.increment())")
            case "/v1/me": return Answers.data(Answers.user(firstName: "Janet"))
            case "/v1/auth/sign-out": return StubProtocol.Stubbed(status: 204)
            default: return Answers.problem(404, "auth/not-found")
            }
        }
    }

    func signIn(_ client: IdentityClient) async throws -> String {
        _ = try await client.signIn(email: "jane@example.com", password: "a long passphrase")
        return try await client.accessToken()
    }

    func refreshCount() -> Int { StubProtocol.requests.filter { $0.path == "/v1/auth/token/refresh" }.count }

    func testTheTokenIsKeptUntilTheLastMinuteThenOneRefreshServesAHundredCallers() async throws {
        let clock = clock
        install { _ in
            var answer = Answers.tokens(access: Answers.jwt(sid: "ses_1", iat: clock.now(), lifetime: 3600, serial: 99),
                                        refresh: "rt2")
            answer.delay = 0.2  // the callers overlap the refresh
            return answer
        }
        let client = client()
        let first = try await signIn(client)
        clock.advance(3539)
        let early = try await client.accessToken()
        XCTAssertEqual(early, first)
        XCTAssertEqual(refreshCount(), 0, "61 s before expiry: no refresh")

        clock.advance(1)  // 60 s before expiry
        let tokens = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<100 { group.addTask { try await client.accessToken() } }
            return try await group.reduce(into: [String]()) { $0.append($1) }
        }
        XCTAssertEqual(refreshCount(), 1, "one refresh for 100 callers")
        XCTAssertEqual(Set(tokens).count, 1)
        XCTAssertNotEqual(tokens.first, first)
        // The new token lives an hour from now: no second refresh.
        let again = try await client.accessToken()
        XCTAssertEqual(again, tokens.first)
        XCTAssertEqual(refreshCount(), 1)
    }

    func testSignedInCallsRefreshAnExpiredTokenBeforeSendingIt() async throws {
        install()
        let client = client()
        let first = try await signIn(client)
        clock.advance(4000)
        _ = try await client.me()
        let bearers = StubProtocol.requests.filter { $0.path == "/v1/me" }.map(\.bearer)
        XCTAssertEqual(bearers.count, 1, "no call with the expired token, so no 401 and retry")
        XCTAssertNotEqual(bearers.first, first)
        XCTAssertEqual(refreshCount(), 1)
    }

    func testOfflineInTheLastMinuteTheOldTokenIsUsedUntilItExpires() async throws {
        install { _ in StubProtocol.Stubbed(status: 0, failure: .notConnectedToInternet) }
        let client = client()
        let first = try await signIn(client)
        clock.advance(3570)
        let token = try await client.accessToken()
        XCTAssertEqual(token, first, "still valid for 30 s")
        clock.advance(40)
        do {
            _ = try await client.accessToken()
            XCTFail("an expired token was handed out")
        } catch is URLError {}
    }

    func testAStreamStartsWithThePresentStateThenTheChanges() async throws {
        install()
        let storage = InMemoryTokenStorage()
        let client = client(storage)
        var before = client.authStates.makeAsyncIterator()
        let signedOut = await before.next()
        XCTAssertEqual(signedOut, .signedOut)

        _ = try await signIn(client)
        let signedIn = await before.next()
        guard case .signedIn(let user)? = signedIn else { return XCTFail("\(String(describing: signedIn))") }
        var after = client.authStates.makeAsyncIterator()
        let present = await after.next()
        XCTAssertEqual(present, .signedIn(user), "a new stream starts signed in")

        try await client.signOut()
        let endedBefore = await before.next()
        let endedAfter = await after.next()
        XCTAssertEqual(endedBefore, .signedOut)
        XCTAssertEqual(endedAfter, .signedOut)
    }

    func testARelaunchedClientKnowsItsUserAndStateFromTheStorageBeforeAnyCall() async throws {
        install()
        let storage = InMemoryTokenStorage()
        let first = client(storage)
        _ = try await signIn(first)
        let renamed = try await first.me()
        XCTAssertEqual(renamed.firstName, "Janet")
        let known = await first.currentUser
        XCTAssertEqual(known, renamed, "me() updates the user last known")

        let before = StubProtocol.requests.count
        let relaunched = client(storage)
        let user = await relaunched.currentUser
        XCTAssertEqual(user, renamed)
        var states = relaunched.authStates.makeAsyncIterator()
        let state = await states.next()
        XCTAssertEqual(state, .signedIn(renamed))
        let session = await relaunched.currentSession
        XCTAssertNil(session, "no access token in memory yet")
        XCTAssertEqual(StubProtocol.requests.count, before, "no request")

        try await relaunched.signOut()
        let gone = await relaunched.currentUser
        XCTAssertNil(gone)
        let stored = await storage.read(TokenStorageKey.user)
        XCTAssertNil(stored)
    }

    func testAStoredProfileWithoutASessionIsNoCurrentUser() async throws {
        let storage = InMemoryTokenStorage()
        let user = try JSONDecoder().decode(User.self, from: JSONSerialization.data(withJSONObject: Answers.user()
            .merging(["created_at": 0]) { $1 }))
        await storage.write(TokenStorageKey.user, value: try StoredUser.encode(user))
        let alone = await client(storage).currentUser
        XCTAssertNil(alone, "no refresh token stored")
        await storage.write(TokenStorageKey.refreshToken, value: "rt1")
        let withSession = await client(storage).currentUser
        XCTAssertEqual(withSession, user)
    }

    func testCurrentSessionDescribesTheAccessTokenInMemory() async throws {
        install()
        let client = client()
        let none = await client.currentSession
        XCTAssertNil(none)
        let signedInAt = clock.now()
        _ = try await signIn(client)
        let current = await client.currentSession
        let session = try XCTUnwrap(current)
        XCTAssertEqual(session.userID, "01j9x6k3m4q5r6s7t8v9w0x1y2")
        XCTAssertEqual(session.sessionID, "ses_1")
        XCTAssertEqual(session.authenticationMethods, ["pwd"])
        XCTAssertEqual(session.assuranceLevel, 1)
        XCTAssertFalse(session.isGuest)
        let expiresAt = try XCTUnwrap(session.accessTokenExpiresAt)
        XCTAssertEqual(expiresAt.timeIntervalSince(signedInAt), 3600, accuracy: 1)
    }
}

/// A clock that stands still until the test moves it.
final class TestClock: @unchecked Sendable {
    private let lock = NSLock()
    private var time = Date(timeIntervalSince1970: 1_800_000_000)

    var now: @Sendable () -> Date { { [self] in lock.lock(); defer { lock.unlock() }; return time } }

    func advance(_ seconds: TimeInterval) {
        lock.lock(); defer { lock.unlock() }
        time = time.addingTimeInterval(seconds)
    }
}
