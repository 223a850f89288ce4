import IdentityKit

/// The proof a command that changes a way into an account needs, checked by the token worker
/// before the flow runs (`CommandRouter.decode`, for every command that conforms here, so a
/// new way-in command gets the check by conforming and cannot forget it). It is the worker's
/// half of the route's declared `Proof` (IdentityGateway `FreshProofStep`): the gateway
/// checks the session's age, the worker checks it again with the half only it can read, the
/// user's MFA state (aal 2 once MFA is on). A forged command published past the gateway meets
/// the same rule.
enum FreshProofRule: Sendable, Equatable {
    /// A session signed in less than `StepUp.maximumAgeSeconds` ago, at aal 2 when MFA is on.
    case freshSignIn
    /// The same, or (MFA off) the account's password, given in the command.
    case freshSignInOrPassword(String?)
    /// The flow checks the command's own proof (a current password); the worker adds step-up
    /// once MFA is on.
    case stepUpWhenMfaOn
}

/// A command that adds, replaces or removes a way in: a password, a provider link, a passkey,
/// a phone, a second factor or backup codes. `freshProof` is nil for an instance that does
/// not change one (a phone code sent for sign-in rather than for linking). Generated from the
/// access its operations declare in proto/ (BEARER_FRESH → `.freshSignIn`,
/// BEARER_FRESH_OR_PASSWORD → `.freshSignInOrPassword`, BEARER_OWN_PROOF → `.stepUpWhenMfaOn`).
protocol ChangesWayIn: ActsForUser {
    var freshProof: FreshProofRule? { get }
}

