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

/// The common case: a signed-in user's command naming its own `uid` and `session_id` fields.
protocol ActsInOwnSession: ActsForUser {
    var uid: String { get }
    var sessionId: String { get }
}

extension ActsInOwnSession {
    var actingUid: String { uid }
    var actingSessionId: String { sessionId }
}

extension TokenV1.UpdateProfile: ActsForUser { var actingUid: String { uid } }
extension TokenV1.UnlinkIdentity: ActsInOwnSession {}
extension TokenV1.SendEmailVerification: ActsForUser { var actingUid: String { uid } }
extension TokenV1.DeleteAccount: ActsInOwnSession {}
extension TokenV1.ChangePassword: ActsInOwnSession {}
extension TokenV1.IssueSessionToken: ActsInOwnSession {}
extension TokenV1.RegisterDevice: ActsInOwnSession {}
extension TokenV1.LinkIdentity: ActsInOwnSession {}
extension TokenV1.VerifyEmail: ActsForUser {
    var actingUid: String { uid ?? "" }
    var actingSessionId: String { sessionId ?? "" }
}
// Second factors (enrolment, status, backup codes, disabling): the signed-in user's own.
extension TokenV1.StartMfaEnrolment: ActsInOwnSession {}
extension TokenV1.ConfirmMfaEnrolment: ActsInOwnSession {}
extension TokenV1.GetMfaStatus: ActsForUser { var actingUid: String { uid } }
extension TokenV1.RegenerateBackupCodes: ActsInOwnSession {}
extension TokenV1.DisableMfa: ActsInOwnSession {}
// Passkeys of a signed-in user: registration, list, rename, remove.
extension TokenV1.PasskeyRegistrationOptions: ActsInOwnSession {}
extension TokenV1.FinishPasskeyRegistration: ActsInOwnSession {}
extension TokenV1.ListPasskeys: ActsInOwnSession {}
extension TokenV1.RenamePasskey: ActsInOwnSession {}
extension TokenV1.DeletePasskey: ActsInOwnSession {}
// Guest upgrades: the guest's token, when a guest is named.
extension TokenV1.SignUp: ActsForUser { var actingUid: String { guestUid ?? "" } }
extension TokenV1.VerifyEmailCode: ActsForUser { var actingUid: String { guestUid ?? "" } }
extension TokenV1.ProviderSignIn: ActsForUser { var actingUid: String { guestUid ?? "" } }
extension TokenV1.VerifyPhoneCode: ActsForUser { var actingUid: String { guestUid ?? "" } }
// Phone linking: a send naming a user (POST /v1/me/phone) and its verification.
extension TokenV1.SendPhoneCode: ActsForUser {
    var actingUid: String { uid ?? "" }
    var actingSessionId: String { sessionId ?? "" }
}
extension TokenV1.LinkPhone: ActsInOwnSession {}

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
