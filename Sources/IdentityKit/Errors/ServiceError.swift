/// An error a client may see: a stable `code` from the API contract's catalogue
/// (docs/api-contract.md), the HTTP status and a `detail` for logs. Internal causes (SQL, C return
/// codes) never go into `detail`; they are logged where they happen and the client gets
/// `auth/internal`.
public struct ServiceError: Error, Sendable, Equatable {
    public struct FieldProblem: Sendable, Equatable {
        public let location: String
        public let message: String
        public init(location: String, message: String) {
            self.location = location
            self.message = message
        }
    }

    public let code: String
    public let status: Int
    public let detail: String
    public let errors: [FieldProblem]
    /// Seconds before a retry makes sense (429): sent as `Retry-After`.
    public let retryAfter: Int?
    /// With a 429 from a named limit: its `RateLimit-Policy` / `RateLimit` headers.
    public var rateLimit: RateLimitHeaders?

    public init(code: String, status: Int, detail: String, errors: [FieldProblem] = [], retryAfter: Int? = nil) {
        self.code = code
        self.status = status
        self.detail = detail
        self.errors = errors
        self.retryAfter = retryAfter
    }
}

/// The catalogue of codes (docs/api-contract.md). Clients match on `code`; it never changes.
extension ServiceError {
    public static func validationFailed(_ errors: [FieldProblem]) -> ServiceError {
        ServiceError(code: "auth/validation-failed", status: 422,
                     detail: "The request body has invalid fields.", errors: errors)
    }
    public static let invalidJSON = ServiceError(code: "auth/invalid-json", status: 400,
                                                 detail: "The request body is not valid JSON.")
    /// Malformed HTTP: ambiguous body framing (Content-Length and Transfer-Encoding together,
    /// differing or invalid Content-Length). The connection is closed after it.
    public static let badRequest = ServiceError(code: "auth/bad-request", status: 400,
                                                detail: "The request is malformed: its Content-Length or Transfer-Encoding is invalid or ambiguous.")
    public static let payloadTooLarge = ServiceError(code: "auth/payload-too-large", status: 413,
                                                     detail: "Request bodies are limited to 64 KiB.")
    public static let unsupportedMediaType = ServiceError(code: "auth/unsupported-media-type", status: 415,
                                                          detail: "Send the body as application/json.")
    public static let notFound = ServiceError(code: "auth/not-found", status: 404,
                                              detail: "No such resource.")
    public static let methodNotAllowed = ServiceError(code: "auth/method-not-allowed", status: 405,
                                                      detail: "This method is not allowed on this resource.")
    public static let `internal` = ServiceError(code: "auth/internal", status: 500,
                                                detail: "An internal error occurred.")
    public static let unavailable = ServiceError(code: "auth/unavailable", status: 503,
                                                 detail: "The service did not answer in time; retry.")
    public static let invalidAppKey = ServiceError(code: "auth/invalid-app-key", status: 401,
                                                   detail: "Missing or unknown X-App-Key.")
    /// Admin routes and introspection: `Authorization` must carry a live secret key of the app
    /// (a user's access token, a rotated-out key, or another app's key is refused the same way).
    public static let invalidSecretKey = ServiceError(code: "auth/invalid-secret-key", status: 401,
                                                      detail: "Missing, unknown or expired secret key.")
    public static let invalidToken = ServiceError(code: "auth/invalid-token", status: 401,
                                                  detail: "The access token is missing or invalid.")
    public static let tokenExpired = ServiceError(code: "auth/token-expired", status: 401,
                                                  detail: "The access token has expired.")
    public static let invalidCredential = ServiceError(code: "auth/invalid-credential", status: 401,
                                                       detail: "The email, username or password is wrong.")
    public static let emailAlreadyInUse = ServiceError(code: "auth/email-already-in-use", status: 409,
                                                       detail: "An account with this email already exists.")
    public static let usernameTaken = ServiceError(code: "auth/username-taken", status: 409,
                                                   detail: "This username is taken.")
    public static let userDisabled = ServiceError(code: "auth/user-disabled", status: 403,
                                                  detail: "This account is disabled.")
    /// A call that changes state with a session cookie from an origin the app does not allow
    /// (the cookie transport's CSRF check, docs/client-profiles.md, "Profiles").
    public static let originNotAllowed = ServiceError(code: "auth/origin-not-allowed", status: 403,
                                                      detail: "This origin may not use the session cookie.")
    public static let refreshTokenRevoked = ServiceError(code: "auth/refresh-token-revoked", status: 401,
                                                         detail: "The refresh token is not valid; sign in again.")
    public static let sessionExpired = ServiceError(code: "auth/session-expired", status: 401,
                                                    detail: "The session reached its lifetime; sign in again.")
    public static let refreshTokenExpired = ServiceError(code: "auth/refresh-token-expired", status: 401,
                                                         detail: "The refresh token has expired; sign in again.")
    public static let accountExistsWithDifferentCredential = ServiceError(
        code: "auth/account-exists-with-different-credential", status: 409,
        detail: "An account with this email exists; sign in to it the usual way, then link this provider.")
    public static let accountExists = ServiceError(code: "auth/account-exists", status: 409,
                                                   detail: "This sign-in already belongs to another account.")
    public static let lastSignInMethod = ServiceError(code: "auth/last-sign-in-method", status: 409,
                                                      detail: "This is the account's last way to sign in.")
    /// A passkey response that does not verify, for a flow that is unknown, used or expired, or a
    /// credential this app does not know: one answer, so a caller cannot tell which check failed.
    public static let invalidPasskey = ServiceError(code: "auth/invalid-passkey", status: 401,
                                                    detail: "The passkey could not be verified.")
    public static let passkeyNotConfigured = ServiceError(code: "auth/passkey-not-configured", status: 422,
                                                          detail: "This app has no passkey relying party configured.")
    public static let providerNotConfigured = ServiceError(code: "auth/provider-not-configured", status: 422,
                                                           detail: "This sign-in provider is not configured for the app.")
    public static let providerUnavailable = ServiceError(code: "auth/provider-unavailable", status: 503,
                                                         detail: "The provider's keys could not be fetched; retry.")
    public static let invalidCode = ServiceError(code: "auth/invalid-code", status: 401,
                                                 detail: "The code is wrong, used, or replaced by a newer one.")
    public static let codeExpired = ServiceError(code: "auth/code-expired", status: 401,
                                                 detail: "The code has expired; ask for a new one.")
    public static func rateLimited(retryAfter seconds: Int) -> ServiceError {
        ServiceError(code: "auth/rate-limited", status: 429, detail: "Too many requests; retry later.",
                     retryAfter: max(1, seconds))
    }
    /// A named limit refused: 429 with `Retry-After` and the limit's headers.
    public static func rateLimited(_ statuses: [RateLimitStore.Status]) -> ServiceError {
        let wait = statuses.last.map { Int($0.retryAfter.rounded(.up)) } ?? 1
        var error = rateLimited(retryAfter: wait)
        error.rateLimit = RateLimitHeaders(statuses)
        return error
    }
    public static let mfaAlreadyEnabled = ServiceError(code: "auth/mfa-already-enabled", status: 409,
                                                       detail: "This second factor is already on; turn MFA off first to replace it.")
    public static let reauthRequired = ServiceError(code: "auth/reauth-required", status: 403,
                                                    detail: "Confirm it is you (fresh proof of this account) first.")
    public static func weakPassword(_ why: String, at location: String = "body.password") -> ServiceError {
        ServiceError(code: "auth/weak-password", status: 422, detail: "The password is too weak.",
                     errors: [FieldProblem(location: location, message: why)])
    }
    public static func invalidEmail(at location: String = "body.email") -> ServiceError {
        ServiceError(code: "auth/invalid-email", status: 422, detail: "The email address is malformed.",
                     errors: [FieldProblem(location: location, message: "must be a valid email address")])
    }
    /// Not a possible phone number: E.164 (`+` and the calling code), or a national number with
    /// `country_code` (an ISO region or a calling code), of a length the country uses.
    public static func invalidPhoneNumber(at location: String = "body.phone") -> ServiceError {
        ServiceError(code: "auth/invalid-phone-number", status: 422, detail: "The phone number is malformed.",
                     errors: [FieldProblem(location: location,
                                           message: "must be E.164 (+33612345678) or a national number with country_code")])
    }
    /// Linking a phone another account of the app has verified.
    public static let phoneAlreadyInUse = ServiceError(code: "auth/phone-already-in-use", status: 409,
                                                       detail: "Another account has verified this phone number.")
}
