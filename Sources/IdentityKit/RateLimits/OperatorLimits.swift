import Foundation

/// The operator's bounds on what a tenant may set for its app: a ceiling per rate limit (and
/// for the SMS breaker's threshold), and the calling codes the operator's shared SMS account
/// may text. A tenant (the admin API, the console) could otherwise raise a limit to 10^9 a
/// second, or have the operator pay for texts to any country. Read from the environment of the
/// token worker, which writes the admin API's settings and sends the codes, and of identityctl.
///
/// `IDENTITY_RATE_LIMIT_CEILINGS=NAME=COUNT/WINDOW,…` (WINDOW as `--rate-limit` takes it: `30s`,
/// `15m`, `1h`, `1d` or seconds; NAME a limit of `RateLimitCatalogue` or `sms_breaker_hourly`;
/// `NAME=none`: no ceiling, so tenants may set anything, `off` included). A limit not named
/// keeps the built-in ceiling: `builtInMultiple` times its default, over its default window.
/// `IDENTITY_SMS_SHARED_CALLING_CODES=33,44,1`: none by default, so nobody's texts go out on
/// the operator's bill to a country the operator did not name.
public struct OperatorLimits: Sendable, Equatable {
    public enum Ceiling: Sendable, Equatable {
        /// At most `count` at once and at most `count` per `window` seconds.
        case limit(count: Int, window: Double)
        /// The operator lets tenants set any value, `off` included.
        case unbounded
    }

    /// The ceilings the environment names; the others are built in.
    public var ceilings: [String: Ceiling] = [:]
    public var sharedCallingCodes: Set<Int> = []

    /// Ten times a default leaves a tenant room for real traffic (a busy app, a load test) and
    /// keeps the anti-abuse limits anti-abuse.
    public static let builtInMultiple = 10
    /// The breaker's threshold is a count an hour, bounded like a limit.
    public static let breakerSetting = "sms_breaker_hourly"

    public init(ceilings: [String: Ceiling] = [:], sharedCallingCodes: Set<Int> = []) {
        self.ceilings = ceilings
        self.sharedCallingCodes = sharedCallingCodes
    }

    /// Every name a ceiling may be set for.
    public static var names: [String] { RateLimitCatalogue.all.map(\.name) + [breakerSetting] }

    /// The ceiling of `name` (nil: no such limit).
    public func ceiling(_ name: String) -> Ceiling? {
        if let set = ceilings[name] { return set }
        if name == Self.breakerSetting {
            return .limit(count: SmsSettings.defaultBreakerHourly * Self.builtInMultiple, window: 3600)
        }
        return RateLimitCatalogue.named(name).map { .limit(count: $0.count * Self.builtInMultiple, window: $0.window) }
    }

    /// What is wrong with a tenant's override of limit `name`, nil when it is within the ceiling.
    /// Both the count and the rate are bounded: `10000000/31d` is a slow rate but a burst of ten
    /// million.
    public func problem(limit name: String, _ override: RateLimitOverride) -> String? {
        guard case .limit(let most, let window)? = ceiling(name) else { return nil }
        switch override {
        case .off:
            return "\(name)=off is not allowed: the operator's ceiling is \(Self.describe(most, window))"
        case .limit(let count, let given):
            guard count > most || Double(count) * window > Double(most) * given else { return nil }
            return "\(name)=\(Self.describe(count, given)) is above the operator's ceiling of \(Self.describe(most, window))"
        }
    }

    /// What is wrong with a tenant's breaker threshold (sends an hour), nil when within.
    public func problem(breakerHourly: Int) -> String? {
        guard case .limit(let most, let window)? = ceiling(Self.breakerSetting),
              Double(breakerHourly) * window > Double(most) * 3600 else { return nil }
        return "must be at most \(Int(Double(most) * 3600 / window)) sends an hour (the operator's ceiling)"
    }

    static func describe(_ count: Int, _ window: Double) -> String { "\(count)/\(Int(window))s" }

    /// The ceilings of `IDENTITY_RATE_LIMIT_CEILINGS`, or the first problem with the text.
    public static func parseCeilings(_ text: String) -> Result<[String: Ceiling], CeilingsProblem> {
        var found: [String: Ceiling] = [:]
        for entry in text.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) where !entry.isEmpty {
            guard let equals = entry.firstIndex(of: "=") else { return .failure(.init("\(entry) wants NAME=COUNT/WINDOW")) }
            let name = String(entry[..<equals])
            let value = String(entry[entry.index(after: equals)...])
            guard names.contains(name) else {
                return .failure(.init("no limit named \(name) (known: \(names.joined(separator: ", ")))"))
            }
            if value == "none" {
                found[name] = .unbounded
            } else if case .limit(let count, let window)? = RateLimitOverride.parse(value) {
                found[name] = .limit(count: count, window: window)
            } else {
                return .failure(.init("\(name) wants COUNT/WINDOW (e.g. 1000/1h) or none, got \(value)"))
            }
        }
        return .success(found)
    }

    public struct CeilingsProblem: Error, Equatable {
        public let message: String
        init(_ message: String) { self.message = message }
    }

    /// Both variables, their problems recorded in `env` (start-up fails on them).
    public static func fromEnvironment(_ env: inout EnvironmentReader) -> OperatorLimits {
        var limits = OperatorLimits()
        switch parseCeilings(env.string("IDENTITY_RATE_LIMIT_CEILINGS", default: "")) {
        case .success(let ceilings): limits.ceilings = ceilings
        case .failure(let problem): env.fail("IDENTITY_RATE_LIMIT_CEILINGS: \(problem.message)")
        }
        let codes = env.string("IDENTITY_SMS_SHARED_CALLING_CODES", default: "")
        if !codes.isEmpty {
            if let parsed = SmsSettingsUpdate.parseCodes(codes), parsed.allSatisfy({ PhoneNumber.mainRegions[$0] != nil }) {
                limits.sharedCallingCodes = Set(parsed)
            } else {
                env.fail("IDENTITY_SMS_SHARED_CALLING_CODES=\(codes) must be calling codes in use, separated by commas (33,44,1)")
            }
        }
        return limits
    }
}
