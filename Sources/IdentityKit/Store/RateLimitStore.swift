import Foundation

/// Counts requests against named limits in PostgreSQL, so every gateway replica (and the token
/// worker, for code guesses) shares one budget. One round trip per request, whatever the number
/// of limits: the `rate_limit_take` function (migration 0006) walks them in order, applies the
/// app's overrides, and stops at the first that refuses.
public struct RateLimitStore: Sendable {
    /// One limit to take from, for one subject. The subject is what is counted: an IP (or an
    /// IPv6 /64), or `RateLimitStore.hashedSubject` of an address or user id.
    public struct Check: Sendable {
        public let policy: RateLimitPolicy
        public let subject: String

        public init(_ policy: RateLimitPolicy, subject: String) {
            self.policy = policy
            self.subject = subject
        }
    }

    /// Where one limit stands after a request: what the `RateLimit` headers report.
    public struct Status: Sendable, Equatable {
        public let name: String
        public let count: Int
        public let window: Double
        public let remaining: Int
        /// Seconds until the whole quota is back.
        public let resetSeconds: Double
        /// Seconds until one more request fits; 0 when this request was allowed.
        public let retryAfter: Double

        public var refused: Bool { retryAfter > 0 }
    }

    let pool: PGPool

    public init(pool: PGPool) { self.pool = pool }

    /// Takes one request from each check. The last status is the refusing one, if any; limits an
    /// app turned off report nothing.
    public func take(appId: String, _ checks: [Check]) throws -> [Status] {
        guard !checks.isEmpty else { return [] }
        return try pool.withConnection { try Self.take(appId: appId, checks, on: $0) }
    }

    /// The same, inside the caller's transaction (the token worker's code checks).
    public static func take(appId: String, _ checks: [Check], on connection: PGConnection) throws -> [Status] {
        let items = JSONValue.array(checks.map {
            .object(["name": .string($0.policy.name), "subject": .string($0.subject),
                     "count": JSONValue($0.policy.count), "window": .number($0.policy.window)])
        })
        let statuses = try connection.query("SELECT * FROM rate_limit_take($1, $2::jsonb)", [appId, items.serialized]).map {
            try Status(name: $0.string("name"), count: $0.int("quota"), window: $0.double("window_seconds"),
                       remaining: $0.int("remaining"), resetSeconds: $0.double("reset_seconds"),
                       retryAfter: $0.double("retry_after"))
        }
        for status in statuses where status.refused {
            ServiceMetrics.rateLimitRefusals.inc(status.name, Metrics.shared.appLabel(appId))
        }
        return statuses
    }

    /// Gives back the request `check` took (a right code guess is not a wrong one).
    public static func refund(appId: String, _ check: Check, on connection: PGConnection) throws {
        _ = try connection.query("SELECT rate_limit_refund($1, $2, $3, $4, $5)",
                                 [appId, check.policy.name, check.subject, String(check.policy.count),
                                  String(check.policy.window)])
    }

    /// A subject for an address or an id: never stored in clear (the table is not a list of
    /// who tried to sign in), case- and space-insensitive.
    public static func hashedSubject(_ value: String) -> String {
        let normalized = TextScanning.trimmed(value, newlines: true).lowercased()
        return Base64URL.encode(Array(Digest.sha256(normalized).prefix(16)))
    }

    /// A subject for an IP: the address itself for IPv4, its /64 for IPv6 (one host usually
    /// holds a whole /64, so counting single IPv6 addresses would count nothing).
    public static func ipSubject(_ ip: String) -> String {
        guard ip.contains(":") else { return ip }
        var bytes = in6_addr()
        guard inet_pton(AF_INET6, ip, &bytes) == 1 else { return ip }
        let prefix = withUnsafeBytes(of: &bytes) { Array($0.prefix(8)) }
        return Hex.encode(prefix) + "::/64"
    }
}
