/// A per-app override as `identityctl apps settings --rate-limit` takes it: `NAME=COUNT/WINDOW`
/// (window `30s`, `15m`, `1h`, or plain seconds) or `NAME=off` (tests only).
public enum RateLimitOverride: Sendable, Equatable {
    case limit(count: Int, window: Double)
    case off

    /// Parses `COUNT/WINDOW` or `off`; nil when malformed.
    public static func parse(_ text: String) -> RateLimitOverride? {
        if text == "off" { return .off }
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let count = Int(parts[0]), (1...1_000_000_000).contains(count),
              let window = parseWindow(parts[1]), window > 0, window <= 31 * 86_400 else { return nil }
        return .limit(count: count, window: window)
    }

    private static func parseWindow(_ text: Substring) -> Double? {
        let units: [Character: Double] = ["s": 1, "m": 60, "h": 3600, "d": 86_400]
        if let last = text.last, let unit = units[last] {
            return Int(text.dropLast()).map { Double($0) * unit }
        }
        return Int(text).map(Double.init)
    }

    /// The stored form: `{"count": 10, "window": 900}` or `"off"`.
    public var json: JSONValue {
        switch self {
        case .off: .string("off")
        case .limit(let count, let window): .object(["count": JSONValue(count), "window": .number(window)])
        }
    }
}
