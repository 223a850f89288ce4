import XCTest
@testable import IdentityClient

/// When the client refreshes an access token before using it: the decision alone, at chosen times.
final class AccessTokenExpiryTests: XCTestCase {
    let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    func expiry(iat: TimeInterval?, exp: TimeInterval?, expiresIn: Int? = nil, receivedAt: Date? = nil) -> AccessTokenExpiry? {
        let payload = [("iat", iat), ("exp", exp)].compactMap { key, value in value.map { "\"\(key)\": \(Int($0))" } }
        let token = "eyJhbGciOiJSUzI1NiJ9." + Base64URL.encode(Data("{\(payload.joined(separator: ", "))}".utf8)) + ".c2ln"
        return AccessTokenExpiry(claims: AccessTokenClaims(token: token), expiresIn: expiresIn, obtainedAt: receivedAt ?? t0)
    }

    func testAnHourTokenIsKeptUntilTheLastMinuteThenRefreshed() throws {
        let e = try XCTUnwrap(expiry(iat: t0.timeIntervalSince1970, exp: t0.timeIntervalSince1970 + 3600))
        XCTAssertEqual(e.expiresAt, t0.addingTimeInterval(3600))
        XCTAssertFalse(e.needsRefresh(at: t0))
        XCTAssertFalse(e.needsRefresh(at: t0.addingTimeInterval(3539)))
        XCTAssertTrue(e.needsRefresh(at: t0.addingTimeInterval(3540)), "60 s before expiry")
        XCTAssertTrue(e.needsRefresh(at: t0.addingTimeInterval(3599)))
        XCTAssertFalse(e.isExpired(at: t0.addingTimeInterval(3599)))
        XCTAssertTrue(e.needsRefresh(at: t0.addingTimeInterval(7200)), "expired")
        XCTAssertTrue(e.isExpired(at: t0.addingTimeInterval(3600)))
    }

    func testAShortTokenIsRefreshedInTheSecondHalfOfItsLifeNotOnEveryCall() throws {
        let e = try XCTUnwrap(expiry(iat: t0.timeIntervalSince1970, exp: t0.timeIntervalSince1970 + 80))
        XCTAssertFalse(e.needsRefresh(at: t0.addingTimeInterval(39)))
        XCTAssertTrue(e.needsRefresh(at: t0.addingTimeInterval(40)))
    }

    func testADeviceClockAnHourAheadCountsFromArrivalNotFromTheServicesClock() throws {
        // Issued at the service's t0; this device thinks it is t0 + 1 h when the token arrives.
        let arrival = t0.addingTimeInterval(3600)
        let e = try XCTUnwrap(expiry(iat: t0.timeIntervalSince1970, exp: t0.timeIntervalSince1970 + 900, receivedAt: arrival))
        XCTAssertEqual(e.expiresAt, arrival.addingTimeInterval(900))
        XCTAssertFalse(e.needsRefresh(at: arrival.addingTimeInterval(60)), "not refreshed on every call")
        XCTAssertTrue(e.needsRefresh(at: arrival.addingTimeInterval(841)))
    }

    func testClocksThatAgreeUseTheEarlierOfExpAndArrivalPlusLifetime() throws {
        // Arrived 2 s after iat (the network): exp is 2 s before arrival + lifetime.
        let e = try XCTUnwrap(expiry(iat: t0.timeIntervalSince1970, exp: t0.timeIntervalSince1970 + 600,
                                     receivedAt: t0.addingTimeInterval(2)))
        XCTAssertEqual(e.expiresAt, t0.addingTimeInterval(600))
    }

    func testWithoutClaimsTheAnswersExpiresInDecides() throws {
        let e = try XCTUnwrap(AccessTokenExpiry(claims: nil, expiresIn: 300, obtainedAt: t0))
        XCTAssertEqual(e.expiresAt, t0.addingTimeInterval(300))
        XCTAssertTrue(e.needsRefresh(at: t0.addingTimeInterval(240)))
    }

    func testNothingToGoByMeansNoExpiry() {
        XCTAssertNil(AccessTokenExpiry(claims: AccessTokenClaims(token: "opaque"), expiresIn: nil, obtainedAt: t0))
        XCTAssertNil(AccessTokenClaims(token: "a.b"))
        XCTAssertNil(AccessTokenClaims(token: "a.%%%.c"))
    }

    func testClaimsAreReadWithEitherFormOfTheAssuranceLevel() throws {
        func claims(_ json: String) throws -> AccessTokenClaims {
            try XCTUnwrap(AccessTokenClaims(token: "h." + Base64URL.encode(Data(json.utf8)) + ".s"))
        }
        let numeric = try claims(#"{"sub": "u1", "sid": "ses_1", "amr": ["pwd", "mfa"], "aal": 2, "is_guest": false, "roles": ["admin"]}"#)
        XCTAssertEqual(numeric.sub, "u1")
        XCTAssertEqual(numeric.sid, "ses_1")
        XCTAssertEqual(numeric.amr, ["pwd", "mfa"])
        XCTAssertEqual(numeric.aal, 2)
        XCTAssertEqual(numeric.roles, ["admin"])
        XCTAssertEqual(try claims(#"{"aal": "aal2"}"#).aal, 2)
        XCTAssertNil(try claims(#"{"aal": "high"}"#).aal)
    }
}
