import Foundation
import XCTest
import IdentityClient

/// The SDK's refresh against the real service's rotation and its 30-second grace (3 s in the
/// e2e stack: IDENTITY_CLIENT_E2E_REFRESH_GRACE_SECONDS).
final class RefreshE2ETests: XCTestCase {
    /// An app restarted with only its stored refresh token: 100 calls at once make one refresh.
    func testHundredConcurrentCallsAfterARestartMakeOneRefresh() async throws {
        let e2e = try E2E.environment()
        try await Tap.reset(e2e)
        let storage = InMemoryTokenStorage()
        let user = try await e2e.client(storage: storage).signUp(email: E2E.uniqueEmail("sf"), password: E2E.password).signedInUser()
        let stored = await storage.read(TokenStorageKey.refreshToken)
        let restarted = e2e.tappedClient(storage: storage)
        let states = restarted.authStates
        let uids = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<100 { group.addTask { try await restarted.me().uid } }
            return try await group.reduce(into: [String]()) { $0.append($1) }
        }
        XCTAssertEqual(uids, Array(repeating: user.uid, count: 100))
        let refreshes = try await Tap.requests(e2e, to: "/v1/auth/token/refresh").count
        XCTAssertEqual(refreshes, 1, "one refresh for 100 calls")
        let reads = try await Tap.requests(e2e, to: "/v1/me").count
        XCTAssertEqual(reads, 100)
        let rotated = await storage.read(TokenStorageKey.refreshToken)
        XCTAssertNotEqual(rotated, stored)
        var iterator = states.makeAsyncIterator()
        let present = await iterator.next()
        XCTAssertEqual(present, .signedIn(user), "the user stored at sign-up, before any call")
        let state = await iterator.next()
        XCTAssertEqual(state, .refreshed)
    }

    /// The refresh's answer is lost after the service rotated the token: the SDK's one retry
    /// presents the spent token within the grace and gets the same successor; the session lives on.
    func testALostRefreshAnswerIsRecoveredWithinTheGrace() async throws {
        let e2e = try E2E.environment()
        try await Tap.reset(e2e)
        let storage = InMemoryTokenStorage()
        let client = e2e.tappedClient(storage: storage)
        _ = try await client.signUp(email: E2E.uniqueEmail("lost"), password: E2E.password)
        let first = await storage.read(TokenStorageKey.refreshToken)
        try await Tap.loseAnswers(e2e, to: "/v1/auth/token/refresh")
        try await client.refresh()
        let refreshes = try await Tap.requests(e2e, to: "/v1/auth/token/refresh")
        XCTAssertEqual(refreshes.count, 2)
        XCTAssertEqual(Set(refreshes.map(\.body)).count, 1, "the retry presents the same refresh token")
        let successor = await storage.read(TokenStorageKey.refreshToken)
        XCTAssertNotEqual(successor, first)
        _ = try await client.me()
        // The successor is a live token, not a stolen one: it refreshes again after the grace.
        try await Task.sleep(nanoseconds: UInt64((e2e.refreshGrace + 1) * 1_000_000_000))
        try await client.refresh()
        _ = try await client.me()
    }

    /// Two installations sharing one stored session refresh at once: both get the same successor.
    /// The spent token presented after the grace is theft: the session ends and the SDK signs out.
    func testParallelRefreshesShareTheSuccessorAndALateReplaySignsOut() async throws {
        let e2e = try E2E.environment()
        let storage = InMemoryTokenStorage()
        _ = try await e2e.client(storage: storage).signUp(email: E2E.uniqueEmail("grace"), password: E2E.password)
        let original = try await XCTUnwrapAsync(await storage.read(TokenStorageKey.refreshToken))
        let a = InMemoryTokenStorage(), b = InMemoryTokenStorage()
        await a.write(TokenStorageKey.refreshToken, value: original)
        await b.write(TokenStorageKey.refreshToken, value: original)
        let clientA = e2e.client(storage: a), clientB = e2e.client(storage: b)
        async let refreshA: Void = clientA.refresh()
        async let refreshB: Void = clientB.refresh()
        _ = try await (refreshA, refreshB)
        let successorA = await a.read(TokenStorageKey.refreshToken)
        let successorB = await b.read(TokenStorageKey.refreshToken)
        XCTAssertEqual(successorA, successorB, "the grace answers the same successor")
        XCTAssertNotEqual(successorA, original)

        try await Task.sleep(nanoseconds: UInt64((e2e.refreshGrace + 1) * 1_000_000_000))
        let thief = InMemoryTokenStorage()
        await thief.write(TokenStorageKey.refreshToken, value: original)
        let replay = e2e.client(storage: thief)
        let states = replay.authStates  // a session stored without its user: its refresh tells the state
        await assertIdentityError(.refreshTokenRevoked) { try await replay.refresh() }
        let kept = await thief.read(TokenStorageKey.refreshToken)
        XCTAssertNil(kept, "a revoked session is cleared from storage")
        var iterator = states.makeAsyncIterator()
        let state = await iterator.next()
        XCTAssertEqual(state, .signedOut)
        // The whole session ended: the legitimate installations are signed out too.
        await assertIdentityError(.refreshTokenRevoked) { try await clientA.refresh() }
        let aSignedIn = await clientA.isSignedIn
        XCTAssertFalse(aSignedIn)
    }
}

func XCTUnwrapAsync<T>(_ value: T?, file: StaticString = #filePath, line: UInt = #line) throws -> T {
    try XCTUnwrap(value, file: file, line: line)
}
