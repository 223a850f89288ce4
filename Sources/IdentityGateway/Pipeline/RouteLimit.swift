import IdentityKit

/// A rate limit a route declares: which limit, and what it counts per (the caller's IP, an
/// address or identifier in the body, or the signed-in user).
struct RouteLimit: Sendable {
    enum Subject: Sendable {
        /// The client IP (`HTTPRequest.clientIP`, after trusted proxies), IPv6 by /64.
        case clientIP
        /// The first of these body fields that holds a non-empty string, hashed; absent → not
        /// counted (the handler answers 422 anyway).
        case bodyField([String])
        /// The user of a valid access token; no valid token → not counted (the handler answers 401).
        case user
        /// The app itself (admin routes: the secret key's app).
        case app
    }

    let policy: RateLimitPolicy
    let subject: Subject
    /// Once this limit (per identifier) is spent, a request with a live device token of the
    /// identifier's user (`X-Device-Token`, `SignInDeviceStore`) is counted against this
    /// budget, per identifier and device, instead of being refused.
    var knownDevice: RateLimitPolicy?

    static func perIP(_ policy: RateLimitPolicy) -> RouteLimit { RouteLimit(policy: policy, subject: .clientIP) }

    static func perField(_ policy: RateLimitPolicy, _ fields: String...) -> RouteLimit {
        RouteLimit(policy: policy, subject: .bodyField(fields))
    }

    static func perUser(_ policy: RateLimitPolicy) -> RouteLimit { RouteLimit(policy: policy, subject: .user) }

    static func perApp(_ policy: RateLimitPolicy) -> RouteLimit { RouteLimit(policy: policy, subject: .app) }
}

/// The limits routes share, named once so two routes that must share a budget cannot drift.
extension [RouteLimit] {
    typealias Catalogue = RateLimitCatalogue

    /// The identifier's budget last: a known device's own budget takes over only when that one is spent.
    static let passwordSignIn: [RouteLimit] = [.perIP(Catalogue.signInPerIP),
                                               RouteLimit(policy: Catalogue.signInPerIdentifier,
                                                          subject: .bodyField(["email", "identifier"]),
                                                          knownDevice: Catalogue.signInPerDevice)]
    static let providerSignIn: [RouteLimit] = [.perIP(Catalogue.signInPerIP)]
    static let signUp: [RouteLimit] = [.perIP(Catalogue.signUpPerIP)]
    static let guest: [RouteLimit] = [.perIP(Catalogue.guestPerIP)]
    static let nonce: [RouteLimit] = [.perIP(Catalogue.noncePerIP)]
    static let refresh: [RouteLimit] = [.perIP(Catalogue.refreshPerIP)]
    /// A mailed code to an address in the body (sign-in code, password reset).
    static let codeSend: [RouteLimit] = [.perIP(Catalogue.codeSendPerIP),
                                         .perField(Catalogue.codeResendPerAddress, "email"),
                                         .perField(Catalogue.codeSendPerAddress, "email")]
    /// A code sent where the body names no address the gateway could count: a texted code
    /// (sign-in, link, the SMS factor; the SMS caps per number, IP and app are the token
    /// worker's `SmsPolicy`, answered like a send so they reveal nothing) or a mail to the
    /// signed-in user's own address (its cooldown is the token worker's). Per IP here.
    static let codeSendPerIP: [RouteLimit] = [.perIP(Catalogue.codeSendPerIP)]
    /// A code guess; the per-address budget is counted by the token worker, which knows
    /// whether the guess was wrong.
    static let codeVerify: [RouteLimit] = [.perIP(Catalogue.codeVerifyPerIP)]
    static let passkeyOptions: [RouteLimit] = [.perIP(Catalogue.passkeyOptionsPerIP)]
    static let mfaVerify: [RouteLimit] = [.perIP(Catalogue.mfaVerifyPerIP)]
    static let passwordCheck: [RouteLimit] = [.perUser(Catalogue.passwordCheckPerUser)]
    static let admin: [RouteLimit] = [.perApp(Catalogue.adminPerApp)]
    static let appleNotifications: [RouteLimit] = [.perApp(Catalogue.appleNotificationsPerApp)]
    /// The web console's forms (`ConsoleSite`, outside the route table): the sign-in forms per
    /// IP; every other form per IP before anything is read, then per signed-in console account
    /// (`.user`: the console user of the session cookie).
    static let consoleSignIn: [RouteLimit] = [.perIP(Catalogue.consoleSignInPerIP)]
    static let consolePost: [RouteLimit] = [.perIP(Catalogue.consolePostPerIP)]
    static let consoleAccountPost: [RouteLimit] = [.perUser(Catalogue.consolePostPerAccount)]
    /// An invitation from the Members page (a mail), per console account, besides the above.
    static let consoleInvite: [RouteLimit] = [.perUser(Catalogue.consoleInvitePerAccount)]
}
