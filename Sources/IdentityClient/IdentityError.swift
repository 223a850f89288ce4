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

    /// The service's error codes (the API contract's catalogue, docs/api-contract.md). A code
    /// this version of the SDK does not know is kept as ``unknown(_:)`` so nothing is lost.
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

        public init(rawValue: String) {
            switch rawValue {
            case "auth/validation-failed": self = .validationFailed
            case "auth/invalid-json": self = .invalidJSON
            case "auth/payload-too-large": self = .payloadTooLarge
            case "auth/unsupported-media-type": self = .unsupportedMediaType
            case "auth/not-found": self = .notFound
            case "auth/method-not-allowed": self = .methodNotAllowed
            case "auth/rate-limited": self = .rateLimited
            case "auth/internal": self = .internal
            case "auth/unavailable": self = .unavailable
            case "auth/bad-request": self = .badRequest
            case "auth/invalid-app-key": self = .invalidAppKey
            case "auth/token-expired": self = .tokenExpired
            case "auth/invalid-token": self = .invalidToken
            case "auth/refresh-token-revoked": self = .refreshTokenRevoked
            case "auth/refresh-token-expired": self = .refreshTokenExpired
            case "auth/email-already-in-use": self = .emailAlreadyInUse
            case "auth/username-taken": self = .usernameTaken
            case "auth/weak-password": self = .weakPassword
            case "auth/invalid-email": self = .invalidEmail
            case "auth/invalid-credential": self = .invalidCredential
            case "auth/user-disabled": self = .userDisabled
            case "auth/invalid-apple-token": self = .invalidAppleToken
            case "auth/invalid-google-token": self = .invalidGoogleToken
            case "auth/invalid-id-token": self = .invalidIdToken
            case "auth/provider-not-configured": self = .providerNotConfigured
            case "auth/provider-unavailable": self = .providerUnavailable
            case "auth/account-exists": self = .accountExists
            case "auth/account-exists-with-different-credential": self = .accountExistsWithDifferentCredential
            case "auth/last-sign-in-method": self = .lastSignInMethod
            case "auth/invalid-code": self = .invalidCode
            case "auth/code-expired": self = .codeExpired
            case "auth/reauth-required": self = .reauthRequired
            case "auth/mfa-already-enabled": self = .mfaAlreadyEnabled
            case "auth/session-expired": self = .sessionExpired
            case "auth/invalid-passkey": self = .invalidPasskey
            case "auth/passkey-not-configured": self = .passkeyNotConfigured
            case "auth/origin-not-allowed": self = .originNotAllowed
            default: self = .unknown(rawValue)
            }
        }

        public var rawValue: String {
            switch self {
            case .validationFailed: return "auth/validation-failed"
            case .invalidJSON: return "auth/invalid-json"
            case .payloadTooLarge: return "auth/payload-too-large"
            case .unsupportedMediaType: return "auth/unsupported-media-type"
            case .notFound: return "auth/not-found"
            case .methodNotAllowed: return "auth/method-not-allowed"
            case .rateLimited: return "auth/rate-limited"
            case .internal: return "auth/internal"
            case .unavailable: return "auth/unavailable"
            case .badRequest: return "auth/bad-request"
            case .invalidAppKey: return "auth/invalid-app-key"
            case .tokenExpired: return "auth/token-expired"
            case .invalidToken: return "auth/invalid-token"
            case .refreshTokenRevoked: return "auth/refresh-token-revoked"
            case .refreshTokenExpired: return "auth/refresh-token-expired"
            case .emailAlreadyInUse: return "auth/email-already-in-use"
            case .usernameTaken: return "auth/username-taken"
            case .weakPassword: return "auth/weak-password"
            case .invalidEmail: return "auth/invalid-email"
            case .invalidCredential: return "auth/invalid-credential"
            case .userDisabled: return "auth/user-disabled"
            case .invalidAppleToken: return "auth/invalid-apple-token"
            case .invalidGoogleToken: return "auth/invalid-google-token"
            case .invalidIdToken: return "auth/invalid-id-token"
            case .providerNotConfigured: return "auth/provider-not-configured"
            case .providerUnavailable: return "auth/provider-unavailable"
            case .accountExists: return "auth/account-exists"
            case .accountExistsWithDifferentCredential: return "auth/account-exists-with-different-credential"
            case .lastSignInMethod: return "auth/last-sign-in-method"
            case .invalidCode: return "auth/invalid-code"
            case .codeExpired: return "auth/code-expired"
            case .reauthRequired: return "auth/reauth-required"
            case .mfaAlreadyEnabled: return "auth/mfa-already-enabled"
            case .sessionExpired: return "auth/session-expired"
            case .invalidPasskey: return "auth/invalid-passkey"
            case .passkeyNotConfigured: return "auth/passkey-not-configured"
            case .originNotAllowed: return "auth/origin-not-allowed"
            case .unknown(let raw): return raw
            }
        }
    }
}

/// Failures of the client itself rather than answers of the service.
public enum IdentityClientError: Error, Sendable, Equatable {
    /// An authorized call was made with no session: sign in first.
    case notSignedIn
    /// The service answered something that is not the documented shape (status and a prefix of the body).
    case invalidResponse(status: Int, body: String)
    /// The platform's authorization (passkey, Sign in with Apple) gave another kind of
    /// credential than the one asked for, or one without the named part.
    case unexpectedCredential(String)
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
