import IdentityKit

/// The request pipeline's rate-limit step: takes one request from each limit the route
/// declares (one store round trip), refuses with 429 when one is spent, and otherwise hands
/// back the `RateLimit-Policy` / `RateLimit` headers for the answer.
struct RateLimitStep: Sendable {
    let store: RateLimitStore
    let auth: Authenticator

    func apply(_ limits: [RouteLimit], context: RouteContext, appId: String) throws -> [(String, String)] {
        let checks = limits.compactMap { limit in
            subject(limit.subject, context).map { RateLimitStore.Check(limit.policy, subject: $0) }
        }
        let statuses = try store.take(appId: appId, checks)
        guard !statuses.isEmpty else { return [] }
        if let last = statuses.last, last.refused { throw ServiceError.rateLimited(statuses) }
        return RateLimitHeaders(statuses).pairs
    }

    private func subject(_ subject: RouteLimit.Subject, _ context: RouteContext) -> String? {
        switch subject {
        case .clientIP:
            return RateLimitStore.ipSubject(context.request.clientIP)
        case .bodyField(let fields):
            for field in fields {
                if case .string(let value)? = context.json?[field], !value.isEmpty {
                    return RateLimitStore.hashedSubject(value)
                }
            }
            return nil
        case .user:
            guard let claims = try? auth.claims(context) else { return nil }
            return RateLimitStore.hashedSubject(claims.sub)
        case .app:
            return "app"
        }
    }
}
