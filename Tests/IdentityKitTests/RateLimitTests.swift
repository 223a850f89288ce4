import Foundation
import XCTest
@testable import IdentityKit

/// The pure parts of rate limiting: override syntax, subjects, header values.
final class RateLimitTests: XCTestCase {
    func testOverridesParseCountsAndWindows() {
        XCTAssertEqual(RateLimitOverride.parse("1000/1h"), .limit(count: 1000, window: 3600))
        XCTAssertEqual(RateLimitOverride.parse("5/15m"), .limit(count: 5, window: 900))
        XCTAssertEqual(RateLimitOverride.parse("2/4s"), .limit(count: 2, window: 4))
        XCTAssertEqual(RateLimitOverride.parse("3/90"), .limit(count: 3, window: 90))
        XCTAssertEqual(RateLimitOverride.parse("1/1d"), .limit(count: 1, window: 86_400))
        XCTAssertEqual(RateLimitOverride.parse("off"), .off)
        for bad in ["", "5", "5/", "/1h", "0/1h", "-1/1h", "5/0s", "5/1y", "five/1h", "5/1h/2", "5/32d", "OFF"] {
            XCTAssertNil(RateLimitOverride.parse(bad), bad)
        }
        XCTAssertEqual(RateLimitOverride.limit(count: 7, window: 60).json.serialized, #"{"count":7,"window":60}"#)
        XCTAssertEqual(RateLimitOverride.off.json.serialized, #""off""#)
    }

    func testEveryLimitHasAUniqueNameAndTheProductDefaults() {
        XCTAssertEqual(Set(RateLimitCatalogue.all.map(\.name)).count, RateLimitCatalogue.all.count)
        XCTAssertEqual(RateLimitCatalogue.named("sign_in_per_identifier"), RateLimitPolicy(name: "sign_in_per_identifier",
                                                                                            count: 10, window: 900))
        XCTAssertEqual(RateLimitCatalogue.signInPerIP.count, 100)
        XCTAssertEqual(RateLimitCatalogue.signInPerIP.window, 60)
        XCTAssertEqual(RateLimitCatalogue.codeSendPerAddress.count, 5)
        XCTAssertEqual(RateLimitCatalogue.codeResendPerAddress.window, 60)
        XCTAssertEqual(RateLimitCatalogue.codeGuessPerAddress.count, 20)
        XCTAssertEqual(RateLimitCatalogue.signUpPerIP.count, 20)
        XCTAssertEqual(RateLimitCatalogue.guestPerIP.count, 30)
        XCTAssertNil(RateLimitCatalogue.named("nope"))
    }

    func testSubjectsNormaliseAndHide() {
        XCTAssertEqual(RateLimitStore.hashedSubject("Jane@Example.com "), RateLimitStore.hashedSubject("jane@example.com"))
        XCTAssertNotEqual(RateLimitStore.hashedSubject("jane@example.com"), RateLimitStore.hashedSubject("joe@example.com"))
        XCTAssertFalse(RateLimitStore.hashedSubject("jane@example.com").contains("jane"))
        XCTAssertEqual(RateLimitStore.ipSubject("203.0.113.7"), "203.0.113.7")
        // One IPv6 host usually owns a /64: it is counted as one subject.
        XCTAssertEqual(RateLimitStore.ipSubject("2001:db8:1:2::1"), RateLimitStore.ipSubject("2001:db8:1:2:ffff::9"))
        XCTAssertNotEqual(RateLimitStore.ipSubject("2001:db8:1:2::1"), RateLimitStore.ipSubject("2001:db8:1:3::1"))
        XCTAssertEqual(RateLimitStore.ipSubject("2001:db8:1:2::1"), "20010db800010002::/64")
    }

    func testHeaderValuesFollowTheDraft() {
        let statuses = [
            RateLimitStore.Status(name: "sign_in_per_ip", count: 100, window: 60, remaining: 99, resetSeconds: 0.6,
                                  retryAfter: 0),
            RateLimitStore.Status(name: "sign_in_per_identifier", count: 10, window: 900, remaining: 0,
                                  resetSeconds: 899.2, retryAfter: 89.1),
        ]
        let headers = RateLimitHeaders(statuses)
        XCTAssertEqual(headers.policy, #""sign_in_per_ip";q=100;w=60, "sign_in_per_identifier";q=10;w=900"#)
        XCTAssertEqual(headers.state, #""sign_in_per_ip";r=99;t=1, "sign_in_per_identifier";r=0;t=900"#)
        let refusal = ServiceError.rateLimited(statuses)
        XCTAssertEqual(refusal.status, 429)
        XCTAssertEqual(refusal.code, "auth/rate-limited")
        XCTAssertEqual(refusal.retryAfter, 90)
        XCTAssertEqual(refusal.rateLimit, headers)
    }
}
