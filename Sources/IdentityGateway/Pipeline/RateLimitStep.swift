import IdentityKit

/// The request pipeline's rate-limit step: takes one request from each limit the route
/// declares (one store round trip), refuses with 429 when one is spent, and otherwise hands
/// back the `RateLimit-Policy` / `RateLimit` headers for the answer. A spent per-identifier
/// limit with a known-device budget (`RouteLimit.knownDevice`) gets a second look: a request
/// from a device that signed in before is counted against that device's own budget instead.
struct RateLimitStep: Sendable {
    let store: RateLimitStore
    let auth: Authenticator
    let devices: SignInDeviceStore

    func apply(_ limits: [RouteLimit], context: RouteContext, appId: String) throws -> [(String, String)] {
        let checks = limits.compactMap { limit in
            subject(limit.subject, context).map { RateLimitStore.Check(limit.policy, subject: $0) }
        }
        var statuses = try store.take(appId: appId, checks)
        guard !statuses.isEmpty else { return [] }
        if let last = statuses.last, last.refused {
            // Only the limit that refused is replaced: those before it were taken, and the
            // walk stopped there, so nothing after it was.
            guard let refusing = limits.first(where: { $0.policy.name == last.name }),
                  let device = try knownDeviceCheck(refusing, context: context, appId: appId) else {
                throw ServiceError.rateLimited(statuses)
            }
            statuses = Array(statuses.dropLast()) + (try store.take(appId: appId, [device]))
            if let last = statuses.last, last.refused { throw ServiceError.rateLimited(statuses) }
        }
        return RateLimitHeaders(statuses).pairs
    }

    /// The known-device budget's check for this request, or nil when the limit has none or the
    /// request carries no live device token of the identifier's user (then the refusal stands:
    /// a forged or foreign token buys nothing, and costs the store one lookup only once the
    /// identifier's budget is spent).
    private func knownDeviceCheck(_ limit: RouteLimit, context: RouteContext, appId: String) throws -> RateLimitStore.Check? {
        guard let policy = limit.knownDevice, case .bodyField(let fields) = limit.subject,
              let token = context.request.header("x-device-token"), SignInDeviceStore.isDeviceToken(token),
              let identifier = firstField(fields, context),
              try devices.isKnown(appId: appId, identifier: identifier, token: token) else { return nil }
        // Per identifier and device: the token's hash names the device without being the token.
        let device = Base64URL.encode(Array(SignInDeviceStore.hash(token).prefix(16)))
        return RateLimitStore.Check(policy, subject: RateLimitStore.hashedSubject(identifier) + "." + device)
    }

    private func firstField(_ fields: [String], _ context: RouteContext) -> String? {
        for field in fields {
            if case .string(let value)? = context.json?[field], !value.isEmpty { return value }
        }
        return nil
    }

    private func subject(_ subject: RouteLimit.Subject, _ context: RouteContext) -> String? {
        switch subject {
        case .clientIP:
            return RateLimitStore.ipSubject(context.request.clientIP)
        case .bodyField(let fields):
            return firstField(fields, context).map(RateLimitStore.hashedSubject)
        case .user:
            // The pipeline verified the caller already on a route whose access needs one.
            guard let claims = context.caller ?? (try? auth.claims(context)) else { return nil }
            return RateLimitStore.hashedSubject(claims.sub)
        case .app:
            return "app"
        }
    }
}
