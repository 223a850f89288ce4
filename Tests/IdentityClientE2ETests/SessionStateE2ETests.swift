import Foundation
import XCTest
// Internal for one thing only: a client whose clock the test moves forward (the service's
// shortest access-token lifetime is 5 minutes, too long to wait for).
@testable import IdentityClient

/// The access token refreshed ahead of its expiry, `currentUser`/`currentSession`, and the
/// state a stream starts with, against the real service's tokens and refresh.
final class SessionStateE2ETests: XCTestCase {
    func testATokenWithinAMinuteOfItsExpiryIsRefreshedOnceForAHundredCallersBeforeUse() async throws {
        let e2e = try E2E.environment()
        try await Tap.reset(e2e)
        let clock = MovedClock()
        let client = IdentityClient(baseURL: e2e.tapURL, appKey: e2e.appKey, storage: InMemoryTokenStorage(),
                                    session: Tap.plainSession, userAgent: "IdentityClientE2ETests", clock: clock.now)
        let user = try await client.signUp(email: E2E.uniqueEmail("exp"), password: E2E.password).signedInUser()
        let first = try await client.accessToken()
        let current = await client.currentSession
        let session = try XCTUnwrap(current)
        XCTAssertEqual(session.userID, user.uid)
        XCTAssertTrue(session.sessionID?.isEmpty == false, "the token's sid")
        XCTAssertEqual(session.authenticationMethods, ["pwd"])
        let expiresAt = try XCTUnwrap(session.accessTokenExpiresAt)
        let lifetime = expiresAt.timeIntervalSince(try XCTUnwrap(session.accessTokenIssuedAt))
        XCTAssertGreaterThanOrEqual(lifetime, 300, "the app's access_token_ttl")
        let idle = try await client.accessToken()
        XCTAssertEqual(idle, first)
        let early = try await Tap.requests(e2e, to: "/v1/auth/token/refresh").count
        XCTAssertEqual(early, 0, "a fresh token is not refreshed")

        // 59 seconds before the token's expiry.
        clock.move(by: expiresAt.timeIntervalSince(clock.now()) - 59)
        let tokens = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<100 { group.addTask { try await client.accessToken() } }
            return try await group.reduce(into: [String]()) { $0.append($1) }
        }
        let refreshes = try await Tap.requests(e2e, to: "/v1/auth/token/refresh").count
        XCTAssertEqual(refreshes, 1, "one refresh for 100 callers")
        XCTAssertEqual(Set(tokens).count, 1)
        XCTAssertNotEqual(tokens.first, first)
        // The service takes the new token, which lives its whole lifetime from now.
        let me = try await client.me()
        XCTAssertEqual(me.uid, user.uid)
        let next = await client.currentSession
        let renewed = try XCTUnwrap(next)
        XCTAssertEqual(renewed.sessionID, session.sessionID, "the same session")
        XCTAssertGreaterThan(try XCTUnwrap(renewed.accessTokenExpiresAt).timeIntervalSince(clock.now()), lifetime - 60)

        // Past the expiry: the signed-in call refreshes first and sends the new token once.
        clock.move(by: lifetime + 1)
        try await Tap.reset(e2e)
        _ = try await client.me()
        let afterExpiry = try await Tap.requests(e2e, to: "/v1/auth/token/refresh").count
        XCTAssertEqual(afterExpiry, 1)
        let reads = try await Tap.requests(e2e, to: "/v1/me").count
        XCTAssertEqual(reads, 1)
    }

    func testARelaunchKnowsTheUserAndStartsSignedInWithoutARequest() async throws {
        let e2e = try E2E.environment()
        let storage = InMemoryTokenStorage()
        let client = e2e.client(storage: storage)
        var fresh = client.authStates.makeAsyncIterator()
        let nobody = await fresh.next()
        XCTAssertEqual(nobody, .signedOut)
        let noUser = await client.currentUser
        XCTAssertNil(noUser)
        _ = try await client.signUp(email: E2E.uniqueEmail("relaunch"), password: E2E.password)
        let renamed = try await client.updateMe(firstName: "Grace")
        let known = await client.currentUser
        XCTAssertEqual(known, renamed)

        try await Tap.reset(e2e)
        let relaunched = e2e.tappedClient(storage: storage)
        let user = await relaunched.currentUser
        XCTAssertEqual(user, renamed)
        var states = relaunched.authStates.makeAsyncIterator()
        let present = await states.next()
        XCTAssertEqual(present, .signedIn(renamed))
        let before = await relaunched.currentSession
        XCTAssertNil(before, "no access token yet")
        for path in ["/v1/auth/token/refresh", "/v1/me"] {
            let sent = try await Tap.requests(e2e, to: path).count
            XCTAssertEqual(sent, 0, path)
        }
        _ = try await relaunched.accessToken()
        let after = await relaunched.currentSession
        XCTAssertEqual(after?.userID, renamed.uid)

        let refreshed = await states.next()
        XCTAssertEqual(refreshed, .refreshed)
        try await relaunched.signOut()
        let ended = await states.next()
        XCTAssertEqual(ended, .signedOut)
        let gone = await relaunched.currentUser
        XCTAssertNil(gone)
    }
}

/// The device clock moved forward by the test.
final class MovedClock: @unchecked Sendable {
    private let lock = NSLock()
    private var offset: TimeInterval = 0

    var now: @Sendable () -> Date {
        { [self] in
            lock.lock(); defer { lock.unlock() }
            return Date().addingTimeInterval(offset)
        }
    }

    func move(by seconds: TimeInterval) {
        lock.lock(); defer { lock.unlock() }
        offset += seconds
    }
}
