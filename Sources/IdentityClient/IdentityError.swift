import Foundation

/// An error answer of the service: its `application/problem+json` body, decoded.
///
/// Match on ``code``: it never changes for a given condition, while ``detail`` is meant for logs.
public struct IdentityError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The HTTP status of the answer (401, 409, 422, 429, ...).
    public let status: Int
    /// The machine-readable code, e.g. ``Code/invalidCredential``.
    public let code: Code
    /// A short human-readable summary of the kind of problem.
    public let title: String?
    /// What happened this time; for logs, not for matching.
    public let detail: String?
    /// The fields the service refused (422 `auth/validation-failed`, `auth/weak-password`, ...).
    public let fieldErrors: [FieldError]
    /// How long to wait before trying again, from a 429's `Retry-After` header.
    public let retryAfter: TimeInterval?
    /// The `X-Request-Id` of the answer, to quote when reporting a problem.
    public let requestID: String?

    public init(status: Int, code: Code, title: String? = nil, detail: String? = nil,
                fieldErrors: [FieldError] = [], retryAfter: TimeInterval? = nil, requestID: String? = nil) {
        self.status = status
        self.code = code
        self.title = title
        self.detail = detail
        self.fieldErrors = fieldErrors
        self.retryAfter = retryAfter
        self.requestID = requestID
    }

    public var description: String {
        "IdentityError(\(status) \(code.rawValue)\(detail.map { ": \($0)" } ?? ""))"
    }

    /// One refused field of a request: where it is (`body.email`) and why.
    public struct FieldError: Sendable, Equatable, Decodable {
        /// Where the field is, e.g. `body.email` or `body.password`.
        public let location: String
        /// Why it was refused.
        public let message: String

        public init(location: String, message: String) {
            self.location = location
            self.message = message
        }
    }

    /// The service's error codes (PRODUCT.md's catalogue). A code this version of the SDK does
    /// not know is kept as ``unknown(_:)`` so nothing is lost.
    public enum Code: Sendable, Hashable, RawRepresentable {
        case validationFailed, invalidJSON, payloadTooLarge, unsupportedMediaType, notFound
        case methodNotAllowed, rateLimited, `internal`, unavailable, badRequest
        case invalidAppKey, tokenExpired, invalidToken
        case refreshTokenRevoked, refreshTokenExpired
        case emailAlreadyInUse, usernameTaken, weakPassword, invalidEmail, invalidCredential, userDisabled
        case invalidAppleToken, invalidGoogleToken, invalidIdToken, providerNotConfigured, providerUnavailable
        case accountExists, accountExistsWithDifferentCredential, lastSignInMethod
        case invalidCode, codeExpired, reauthRequired
        case mfaAlreadyEnabled, sessionExpired
        case invalidPasskey, passkeyNotConfigured, originNotAllowed
        /// A code not in this list, kept verbatim.
        case unknown(String)

        private static let table: [(Code, String)] = [
            (.validationFailed, "auth/validation-failed"), (.invalidJSON, "auth/invalid-json"),
            (.payloadTooLarge, "auth/payload-too-large"), (.unsupportedMediaType, "auth/unsupported-media-type"),
            (.notFound, "auth/not-found"), (.methodNotAllowed, "auth/method-not-allowed"),
            (.rateLimited, "auth/rate-limited"), (.internal, "auth/internal"), (.unavailable, "auth/unavailable"),
            (.badRequest, "auth/bad-request"), (.invalidAppKey, "auth/invalid-app-key"),
            (.tokenExpired, "auth/token-expired"), (.invalidToken, "auth/invalid-token"),
            (.refreshTokenRevoked, "auth/refresh-token-revoked"), (.refreshTokenExpired, "auth/refresh-token-expired"),
            (.emailAlreadyInUse, "auth/email-already-in-use"), (.usernameTaken, "auth/username-taken"),
            (.weakPassword, "auth/weak-password"), (.invalidEmail, "auth/invalid-email"),
            (.invalidCredential, "auth/invalid-credential"), (.userDisabled, "auth/user-disabled"),
            (.invalidAppleToken, "auth/invalid-apple-token"), (.invalidGoogleToken, "auth/invalid-google-token"),
            (.invalidIdToken, "auth/invalid-id-token"), (.providerNotConfigured, "auth/provider-not-configured"),
            (.providerUnavailable, "auth/provider-unavailable"), (.accountExists, "auth/account-exists"),
            (.accountExistsWithDifferentCredential, "auth/account-exists-with-different-credential"),
            (.lastSignInMethod, "auth/last-sign-in-method"), (.invalidCode, "auth/invalid-code"),
            (.codeExpired, "auth/code-expired"), (.reauthRequired, "auth/reauth-required"),
            (.mfaAlreadyEnabled, "auth/mfa-already-enabled"), (.sessionExpired, "auth/session-expired"),
            (.invalidPasskey, "auth/invalid-passkey"), (.passkeyNotConfigured, "auth/passkey-not-configured"),
            (.originNotAllowed, "auth/origin-not-allowed"),
        ]
        private static let byRaw: [String: Code] = Dictionary(uniqueKeysWithValues: table.map { ($0.1, $0.0) })

        public init(rawValue: String) {
            self = Code.byRaw[rawValue] ?? .unknown(rawValue)
        }

        public var rawValue: String {
            if case .unknown(let raw) = self { return raw }
            return Code.table.first { $0.0 == self }!.1
        }
    }
}

/// Failures of the client itself rather than answers of the service.
public enum IdentityClientError: Error, Sendable, Equatable {
    /// An authorized call was made with no session: sign in first.
    case notSignedIn
    /// The service answered something that is not the documented shape (status and a prefix of the body).
    case invalidResponse(status: Int, body: String)
}

extension IdentityError {
    /// Decodes a problem+json answer; a body that is not one still gives an error with the status.
    static func from(status: Int, body: Data, headers: [AnyHashable: Any]) -> IdentityError {
        struct Problem: Decodable {
            let code: String?
            let title: String?
            let detail: String?
            let errors: [FieldError]?
            let request_id: String?
        }
        let problem = try? JSONDecoder().decode(Problem.self, from: body)
        let retryAfter = header("Retry-After", in: headers).flatMap(TimeInterval.init)
        return IdentityError(status: status, code: Code(rawValue: problem?.code ?? "http/\(status)"),
                             title: problem?.title, detail: problem?.detail, fieldErrors: problem?.errors ?? [],
                             retryAfter: retryAfter,
                             requestID: problem?.request_id ?? header("X-Request-Id", in: headers))
    }

    static func header(_ name: String, in headers: [AnyHashable: Any]) -> String? {
        for (key, value) in headers {
            if let key = key as? String, key.caseInsensitiveCompare(name) == .orderedSame { return value as? String }
        }
        return nil
    }
}
