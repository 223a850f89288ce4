import IdentityKit

/// Step-up (PRODUCT.md, "MFA"): changing second factors, changing the password and deleting
/// the account of a user with MFA on need a session at `aal` 2 signed in less than 5 minutes
/// ago; otherwise 403 `auth/reauth-required` (sign in again, with the second factor). Starting
/// MFA needs a session less than 5 minutes old: a stolen access token alone must not be able
/// to tie the account to the thief's authenticator.
struct StepUp: Sendable {
    static let maximumAgeSeconds = 300

    let sessions: SessionStore
    let factors: MfaStore
    let pool: PGPool

    /// Whether the user has MFA on.
    func mfaOn(appId: String, uid: String) throws -> Bool {
        try pool.withConnection { try !factors.confirmedMethods(appId: appId, uid: uid, on: $0).isEmpty }
    }

    /// Throws `auth/reauth-required` unless the session is recent enough (and at aal 2 when MFA is on).
    func require(appId: String, uid: String, sessionId: String, evenWithoutMFA: Bool) throws {
        let on = try mfaOn(appId: appId, uid: uid)
        guard on || evenWithoutMFA else { return }
        guard let session = try sessions.assurance(appId: appId, sessionId: sessionId, uid: uid),
              session.ageSeconds < Self.maximumAgeSeconds, !on || session.aal >= 2
        else { throw ServiceError.reauthRequired }
    }
}
