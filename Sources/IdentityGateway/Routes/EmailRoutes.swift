import IdentityKit

/// Email codes, password recovery and change, email verification and change (docs/api-contract.md,
/// "Sign-in methods": email code; "Account"). Answers never wait for SMTP: the mail is queued for
/// the mailer worker. Every handler is generated from its declaration (gateway.proto); email
/// verification takes an optional access token, which makes the proof one made in that session.
struct EmailRoutes: EmailApiHandlers {
    let auth: Authenticator
    let commands: CommandSender
}
