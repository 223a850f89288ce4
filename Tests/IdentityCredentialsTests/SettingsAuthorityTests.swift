import XCTest
@testable import IdentityCredentials
@testable import IdentityKit

/// The operator's ceilings as a settings update meets them (`SettingsAuthority`).
final class SettingsAuthorityTests: XCTestCase {
    func testATenantIsHeldToTheCeilingsAndTheOperatorIsNot() {
        var update = AppSettingsUpdate()
        update.rateLimits = ["sign_in_per_ip": "5000/1m", "guest_per_ip": "default", "sign_up_per_ip": "lots"]
        update.sms.breakerHourly = 40_000
        let tenant = update.ceilingProblems(.tenant(OperatorLimits()))
        XCTAssertEqual(tenant.map(\.setting), ["rate_limits", "sms_breaker_hourly"])
        XCTAssertTrue(update.ceilingProblems(.operator(OperatorLimits())).isEmpty)
    }
}
