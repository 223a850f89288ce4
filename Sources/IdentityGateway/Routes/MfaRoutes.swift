import IdentityKit

/// MFA (docs/api-contract.md, "MFA"): enrolment, status, backup codes and switching off for the
/// signed-in user, and the second step of a sign-in that answered 202. Every handler is generated
/// from its declaration (gateway.proto). The gateway reads nothing of it (its database role may not
/// read TOTP secrets or backup code hashes): every call is a command to the token worker, which
/// also checks step-up.
struct MfaRoutes: MfaApiHandlers {
    let commands: CommandSender
}
