import IdentityKit

/// Phone sign-in and phone linking (docs/api-contract.md, "Sign-in methods": phone code). Every
/// handler is generated from its declaration (gateway.proto): numbers are normalised to E.164 by
/// the body reader (422 `auth/invalid-phone-number` when they cannot be); the SMS policy (allowed
/// calling codes, caps, breaker) is the token worker's, and its refusals answer like sends.
struct PhoneRoutes: PhoneApiHandlers {
    let auth: Authenticator
    let commands: CommandSender
}
