import IdentityKit

/// Commands that act for one user on the gateway's word, and which user (and session) that is:
/// the token worker runs one only when its message carries that user's access token
/// (`CallerAuthority`, checked in `CommandRouter.decode` for every command, so a new command
/// type gets the check by conforming here). Commands whose authority is their own content (a
/// password, a code, a refresh token, a provider identity sealed by the provider worker) do not
/// conform; those that upgrade a guest conform with the guest's uid when they name one.
protocol ActsForUser {
    /// The app the command acts in: the caller's token (or secret key) must be of this app, not
    /// only of the app its message header names.
    var appId: String { get }
    var actingUid: String { get }
    /// The session the command says it comes from; empty when it names none.
    var actingSessionId: String { get }
}

extension ActsForUser {
    var actingSessionId: String { "" }
}

extension TokenV1.UpdateProfile: ActsForUser { var actingUid: String { uid } }
extension TokenV1.UnlinkIdentity: ActsForUser { var actingUid: String { uid } }
extension TokenV1.SendEmailVerification: ActsForUser { var actingUid: String { uid } }
extension TokenV1.DeleteAccount: ActsForUser {
    var actingUid: String { uid }
    var actingSessionId: String { sessionId }
}
extension TokenV1.ChangePassword: ActsForUser {
    var actingUid: String { uid }
    var actingSessionId: String { sessionId }
}
extension TokenV1.IssueSessionToken: ActsForUser {
    var actingUid: String { uid }
    var actingSessionId: String { sessionId }
}
extension TokenV1.RegisterDevice: ActsForUser {
    var actingUid: String { uid }
    var actingSessionId: String { sessionId }
}
extension TokenV1.LinkIdentity: ActsForUser {
    var actingUid: String { uid }
    var actingSessionId: String { sessionId }
}
extension TokenV1.VerifyEmail: ActsForUser {
    var actingUid: String { uid ?? "" }
    var actingSessionId: String { sessionId ?? "" }
}
// Second factors (enrolment, status, backup codes, disabling): the signed-in user's own.
extension TokenV1.StartMfaEnrolment: ActsForUser {
    var actingUid: String { uid }
    var actingSessionId: String { sessionId }
}
extension TokenV1.ConfirmMfaEnrolment: ActsForUser {
    var actingUid: String { uid }
    var actingSessionId: String { sessionId }
}
extension TokenV1.GetMfaStatus: ActsForUser { var actingUid: String { uid } }
extension TokenV1.RegenerateBackupCodes: ActsForUser {
    var actingUid: String { uid }
    var actingSessionId: String { sessionId }
}
extension TokenV1.DisableMfa: ActsForUser {
    var actingUid: String { uid }
    var actingSessionId: String { sessionId }
}
// Passkeys of a signed-in user: registration, list, rename, remove.
extension TokenV1.PasskeyRegistrationOptions: ActsForUser {
    var actingUid: String { uid }
    var actingSessionId: String { sessionId }
}
extension TokenV1.FinishPasskeyRegistration: ActsForUser {
    var actingUid: String { uid }
    var actingSessionId: String { sessionId }
}
extension TokenV1.ListPasskeys: ActsForUser {
    var actingUid: String { uid }
    var actingSessionId: String { sessionId }
}
extension TokenV1.RenamePasskey: ActsForUser {
    var actingUid: String { uid }
    var actingSessionId: String { sessionId }
}
extension TokenV1.DeletePasskey: ActsForUser {
    var actingUid: String { uid }
    var actingSessionId: String { sessionId }
}
// Guest upgrades: the guest's token, when a guest is named.
extension TokenV1.SignUp: ActsForUser { var actingUid: String { guestUid ?? "" } }
extension TokenV1.VerifyEmailCode: ActsForUser { var actingUid: String { guestUid ?? "" } }
extension TokenV1.ProviderSignIn: ActsForUser { var actingUid: String { guestUid ?? "" } }

/// Admin API commands (`identity.admin.v1`) act for the app's backend: only with a live secret
/// key of the command's own app in the message (`CallerAuthority.checkAppBackend`).
protocol ActsForAppBackend {
    var appId: String { get }
}

extension AdminV1.RotateSecretKey: ActsForAppBackend {}
extension AdminV1.ImportUsers: ActsForAppBackend {}
extension AdminV1.RotateSigningKey: ActsForAppBackend {}
extension AdminV1.CreateUser: ActsForAppBackend {}
extension AdminV1.UpdateUser: ActsForAppBackend {}
extension AdminV1.SetUserDisabled: ActsForAppBackend {}
extension AdminV1.DeleteUser: ActsForAppBackend {}
extension AdminV1.UpdateAppSettings: ActsForAppBackend {}
extension AdminV1.ResetUserMfa: ActsForAppBackend {}
