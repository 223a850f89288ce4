import IdentityKit

/// Errors several routes declare (`Route.errors`), named once like the shared limits.
extension [ServiceError] {
    /// An access token is needed (`Authenticator.liveSession` / `claims`), or one was sent to
    /// upgrade a guest (`upgradingGuest`): missing, malformed, of another app, of an ended
    /// session, or expired.
    static let signedIn: [ServiceError] = [.invalidToken, .tokenExpired]

    /// The provider worker's verification of an id token of `provider`.
    static func providerVerification(_ provider: String) -> [ServiceError] {
        [ProviderErrors.invalidToken(provider), .providerNotConfigured, .providerUnavailable]
    }

    /// A provider sign-in finished by the token worker (`ProviderSignIn`), guest upgrade included.
    static func providerSignIn(_ provider: String) -> [ServiceError] {
        signedIn + providerVerification(provider) + [.userDisabled, .accountExists, .accountExistsWithDifferentCredential]
    }

    /// A mailed code checked by the token worker: wrong, used or replaced, expired, or the
    /// address's budget of wrong guesses spent (429).
    static let codeCheck: [ServiceError] = [.invalidEmail(), .invalidCode, .codeExpired, .rateLimited(retryAfter: 1)]

    /// A texted code checked by the token worker: wrong, used, replaced or of an unknown
    /// session, expired, or the number's budget of wrong guesses spent (429).
    static let phoneCodeCheck: [ServiceError] = [.invalidCode, .codeExpired, .rateLimited(retryAfter: 1)]

    /// A second factor's code checked by the token worker (MFA sign-in, enrolment, disabling).
    static let secondFactorCheck: [ServiceError] = [.validationFailed([]), .invalidCode, .codeExpired,
                                                    .rateLimited(retryAfter: 1), .userDisabled]

    /// Changes of an account's factors (BEARER_FRESH: a session signed in less than 5 minutes
    /// ago, at aal 2 once MFA is on) may also meet a disabled account.
    static let mfaEnrolment: [ServiceError] = [.userDisabled]
}
