import Foundation
import IdentityKit

/// `identityctl apps settings --rate-limit NAME=COUNT/WINDOW` (repeatable): per-app overrides
/// of the limits in `RateLimitCatalogue`. `NAME=default` removes an override; `NAME=off` turns
/// a limit off, which only tests may do (IDENTITY_RATE_LIMIT_OFF_ALLOWED=1).
enum RateLimitSettings {
    /// Applies the flags, then answers every limit's effective setting: `"100/60s"` or `"off"`.
    static func apply(_ flags: [String], appId: String, apps: AppStore, offAllowed: Bool) throws -> [String: String] {
        for flag in flags {
            guard let equals = flag.firstIndex(of: "=") else { fail("--rate-limit wants NAME=COUNT/WINDOW, got \(flag)") }
            let name = String(flag[..<equals])
            let value = String(flag[flag.index(after: equals)...])
            guard RateLimitCatalogue.named(name) != nil else {
                fail("--rate-limit: no limit named \(name) (known: \(RateLimitCatalogue.all.map(\.name).joined(separator: ", ")))")
            }
            if value == "default" {
                try apps.setRateLimitOverride(appId: appId, name: name, nil)
                continue
            }
            guard let override = RateLimitOverride.parse(value) else {
                fail("--rate-limit \(name) wants COUNT/WINDOW (e.g. 1000/1h), default or off, got \(value)")
            }
            if override == .off, !offAllowed {
                fail("--rate-limit \(name)=off is for tests only (set IDENTITY_RATE_LIMIT_OFF_ALLOWED=1)")
            }
            try apps.setRateLimitOverride(appId: appId, name: name, override)
        }
        let overrides = try apps.rateLimitOverrides(appId: appId)
        var effective: [String: String] = [:]
        for policy in RateLimitCatalogue.all {
            switch overrides[policy.name] {
            case .string("off")?:
                effective[policy.name] = "off"
            case .object(let setting)?:
                if case .number(let count)? = setting["count"], case .number(let window)? = setting["window"] {
                    effective[policy.name] = "\(Int(count))/\(Int(window))s"
                }
            default:
                effective[policy.name] = "\(policy.count)/\(Int(policy.window))s"
            }
        }
        return effective
    }
}
