import Foundation
import IdentityKit

/// Who changes an app's settings. A tenant (the app's backend through the admin API, later its
/// console) is held to the operator's ceilings and may only request a domain; the operator
/// (identityctl, with the database's credentials) is the one who sets the ceilings, so its own
/// word is the allowance: a limit above the ceiling, a domain allowed without a proof. The
/// shared SMS account's calling codes bind both: they are a property of the operator's account,
/// which the token worker enforces at send time whoever saved the codes.
public struct SettingsAuthority: Sendable {
    public let limits: OperatorLimits
    public let isTenant: Bool

    public static func tenant(_ limits: OperatorLimits) -> SettingsAuthority { .init(limits: limits, isTenant: true) }
    public static func `operator`(_ limits: OperatorLimits) -> SettingsAuthority { .init(limits: limits, isTenant: false) }
}

extension AppSettingsUpdate {
    /// A tenant's overrides past the operator's ceilings (none for the operator), by setting.
    /// Malformed values are `problems(offAllowed:)`'s to report.
    public func ceilingProblems(_ authority: SettingsAuthority) -> [(setting: String, message: String)] {
        guard authority.isTenant else { return [] }
        var found: [(String, String)] = []
        for (name, value) in rateLimits.sorted(by: { $0.key < $1.key }) where value != "default" {
            guard RateLimitCatalogue.named(name) != nil, let override = RateLimitOverride.parse(value) else { continue }
            if let problem = authority.limits.problem(limit: name, override) { found.append(("rate_limits", problem)) }
        }
        if let hourly = sms.breakerHourly, let problem = authority.limits.problem(breakerHourly: hourly) {
            found.append(("sms_breaker_hourly", problem))
        }
        return found
    }

    /// Refuses calling codes the operator's shared SMS account may not text, when the app would
    /// text through that account after this update (no SMS account of its own). Checked only
    /// when the update touches the codes or the account, so a narrower allowance later does not
    /// block unrelated changes (the send-time check covers it).
    func checkSharedSmsAccount(appId: String, pool: PGPool, _ authority: SettingsAuthority) throws {
        let sms = self.sms
        guard sms.allowedCallingCodes != nil || sms.accountSid != nil || sms.authToken != nil else { return }
        let stored = try SmsSettingsStore(pool: pool).settings(appId: appId)
        let codes = sms.allowedCallingCodes ?? stored.allowedCallingCodes
        let sid = sms.accountSid.map { $0.isEmpty ? nil : $0 } ?? stored.accountSid
        let tokenSet = sms.authToken.map { !$0.isEmpty } ?? stored.authTokenSet
        guard sid == nil || !tokenSet else { return }
        let outside = Array(Set(codes).subtracting(authority.limits.sharedCallingCodes)).sorted()
        guard !outside.isEmpty else { return }
        throw ServiceError.validationFailed([.init(
            location: "body.sms_allowed_calling_codes",
            message: "\(outside.map { "+\($0)" }.joined(separator: ", ")) may not be texted through the operator's "
                + "shared SMS account (its calling codes: \(Self.describeCodes(authority.limits.sharedCallingCodes))); "
                + "set an SMS account of the app's own to text them")])
    }

    static func describeCodes(_ codes: Set<Int>) -> String {
        codes.isEmpty ? "none" : codes.sorted().map { "+\($0)" }.joined(separator: ", ")
    }
}
