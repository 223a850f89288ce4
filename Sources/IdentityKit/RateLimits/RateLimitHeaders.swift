/// The `RateLimit-Policy` and `RateLimit` header values (draft-ietf-httpapi-ratelimit-headers)
/// for the limits a request was counted against: `"sign_in_per_ip";q=100;w=60` and
/// `"sign_in_per_ip";r=99;t=1`, one list item per limit.
public struct RateLimitHeaders: Sendable, Equatable {
    public let policy: String
    public let state: String

    public init(policy: String, state: String) {
        self.policy = policy
        self.state = state
    }

    public init(_ statuses: [RateLimitStore.Status]) {
        policy = statuses.map { "\"\($0.name)\";q=\($0.count);w=\(Int($0.window.rounded(.up)))" }
            .joined(separator: ", ")
        state = statuses.map { "\"\($0.name)\";r=\($0.remaining);t=\(Int($0.resetSeconds.rounded(.up)))" }
            .joined(separator: ", ")
    }

    /// The two header names, also what a browser page is allowed to read of them (CORS
    /// `Access-Control-Expose-Headers`, `ClientEdge.exposedHeaders`).
    public static let names = (policy: "RateLimit-Policy", state: "RateLimit")

    public var pairs: [(String, String)] { [(Self.names.policy, policy), (Self.names.state, state)] }
}
