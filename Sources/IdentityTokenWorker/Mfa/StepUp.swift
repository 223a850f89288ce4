import IdentityCredentials
import IdentityKit

/// Step-up (docs/api-contract.md, "Account": fresh proof): a change of a way into an account
/// (`ChangesWayIn`) and the deletion of an account with MFA on need a session signed in less than 5
/// minutes ago, at `aal` 2 once MFA is on; otherwise 403 `auth/reauth-required` (sign in again,
/// with the second factor). A stolen access token alone must not be able to tie the account to the
/// thief's authenticator, phone or provider account.
struct StepUp: Sendable {
    static let maximumAgeSeconds = StepUpWindow.seconds

    let sessions: SessionStore
    let factors: MfaStore
    let users: UserStore
    let hasher: PasswordHasher
    let pool: PGPool

    /// Whether the user has MFA on.
    func mfaOn(appId: String, uid: String) throws -> Bool {
        try pool.withConnection { try !factors.confirmedMethods(appId: appId, uid: uid, on: $0).isEmpty }
    }

    /// Throws `auth/reauth-required` unless the session is recent enough (and at aal 2 when MFA is on).
    func require(appId: String, uid: String, sessionId: String, evenWithoutMFA: Bool) throws {
        let on = try mfaOn(appId: appId, uid: uid)
        guard on || evenWithoutMFA else { return }
        try requireFresh(appId: appId, uid: uid, sessionId: sessionId, mfaOn: on)
    }

    /// The worker's check of a way-in command's declared rule (`CommandRouter.decode`).
    func check(_ rule: FreshProofRule, appId: String, uid: String, sessionId: String) throws {
        let on = try mfaOn(appId: appId, uid: uid)
        switch rule {
        case .freshSignIn:
            try requireFresh(appId: appId, uid: uid, sessionId: sessionId, mfaOn: on)
        case .stepUpWhenMfaOn:
            if on { try requireFresh(appId: appId, uid: uid, sessionId: sessionId, mfaOn: on) }
        case .freshSignInOrPassword(let password):
            do {
                try requireFresh(appId: appId, uid: uid, sessionId: sessionId, mfaOn: on)
            } catch let error as ServiceError where error.code == ServiceError.reauthRequired.code {
                // The password is one factor: with MFA on it is not proof enough on its own.
                guard !on, let password, password.unicodeScalars.count <= PasswordPolicy.maximumLength,
                      let hash = try users.find(appId: appId, uid: uid)?.passwordHash,
                      hasher.verifyStored(password, against: hash)
                else { throw ServiceError.reauthRequired }
            }
        }
    }

    private func requireFresh(appId: String, uid: String, sessionId: String, mfaOn: Bool) throws {
        guard let session = try sessions.assurance(appId: appId, sessionId: sessionId, uid: uid),
              Self.isFresh(ageSeconds: session.ageSeconds, aal: session.aal, mfaOn: mfaOn) else {
            throw ServiceError.reauthRequired
        }
    }

    /// The rule on a live session's age and assurance: signed in less than
    /// `maximumAgeSeconds` ago, and at aal 2 when MFA is on.
    static func isFresh(ageSeconds: Int, aal: Int, mfaOn: Bool) -> Bool {
        ageSeconds < maximumAgeSeconds && (!mfaOn || aal >= 2)
    }
}
