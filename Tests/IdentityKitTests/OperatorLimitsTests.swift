import XCTest
@testable import IdentityKit

/// The operator's ceilings on tenants' overrides and its shared SMS account's calling codes.
final class OperatorLimitsTests: XCTestCase {
    func testTheBuiltInCeilingIsTenTimesTheDefaultInCountAndRate() {
        let limits = OperatorLimits()
        XCTAssertEqual(limits.ceiling("sign_in_per_ip"), .limit(count: 1000, window: 60))
        XCTAssertEqual(limits.ceiling("sms_breaker_hourly"), .limit(count: 30_000, window: 3600))
        XCTAssertNil(limits.ceiling("nope"))
        XCTAssertNil(limits.problem(limit: "sign_in_per_ip", .limit(count: 1000, window: 60)))
        XCTAssertNil(limits.problem(limit: "sign_in_per_ip", .limit(count: 10, window: 3600)))
        // More at once, a faster rate, or the same rate with a bigger burst: all refused.
        XCTAssertNotNil(limits.problem(limit: "sign_in_per_ip", .limit(count: 1001, window: 60)))
        XCTAssertNotNil(limits.problem(limit: "sign_in_per_ip", .limit(count: 1000, window: 59)))
        XCTAssertNotNil(limits.problem(limit: "sign_in_per_ip", .limit(count: 10_000, window: 600)))
        XCTAssertNotNil(limits.problem(limit: "sign_in_per_ip", .off))
        XCTAssertNil(limits.problem(breakerHourly: 30_000))
        XCTAssertNotNil(limits.problem(breakerHourly: 30_001))
    }

    func testTheEnvironmentSetsCeilingsAndNoneAllowsOff() throws {
        let ceilings = try OperatorLimits.parseCeilings(" guest_per_ip=none, sign_up_per_ip=40/1h,sms_breaker_hourly=100/1m").get()
        XCTAssertEqual(ceilings, ["guest_per_ip": .unbounded, "sign_up_per_ip": .limit(count: 40, window: 3600),
                                  "sms_breaker_hourly": .limit(count: 100, window: 60)])
        let limits = OperatorLimits(ceilings: ceilings)
        XCTAssertNil(limits.problem(limit: "guest_per_ip", .off))
        XCTAssertNil(limits.problem(limit: "guest_per_ip", .limit(count: 1_000_000_000, window: 1)))
        XCTAssertNotNil(limits.problem(limit: "sign_up_per_ip", .limit(count: 41, window: 3600)))
        XCTAssertNil(limits.problem(breakerHourly: 6000))  // 100 a minute is 6000 an hour
        XCTAssertNotNil(limits.problem(breakerHourly: 6001))
        XCTAssertEqual(try OperatorLimits.parseCeilings("").get(), [:])
        for bad in ["nope=1/1m", "sign_in_per_ip", "sign_in_per_ip=lots", "sign_in_per_ip=off"] {
            XCTAssertThrowsError(try OperatorLimits.parseCeilings(bad).get(), bad)
        }
    }

    func testSharedCallingCodesComeFromTheEnvironmentAndDefaultToNone() {
        var env = EnvironmentReader([:])
        XCTAssertEqual(OperatorLimits.fromEnvironment(&env).sharedCallingCodes, [])
        env = EnvironmentReader(["IDENTITY_SMS_SHARED_CALLING_CODES": "33,+44, 1"])
        XCTAssertEqual(OperatorLimits.fromEnvironment(&env).sharedCallingCodes, [1, 33, 44])
        XCTAssertTrue(env.problems.isEmpty)
        env = EnvironmentReader(["IDENTITY_SMS_SHARED_CALLING_CODES": "33,999", "IDENTITY_RATE_LIMIT_CEILINGS": "x=1/1s"])
        _ = OperatorLimits.fromEnvironment(&env)
        XCTAssertEqual(env.problems.count, 2, "\(env.problems)")
    }
}
