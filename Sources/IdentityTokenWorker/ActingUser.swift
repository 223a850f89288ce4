import IdentityKit

/// Commands that act for one user on the gateway's word, and which user (and session) that is:
/// the token worker runs one only when its message carries that user's access token
/// (`CallerAuthority`, checked in `CommandRouter.Checks.decode` for every command). The
/// conformances are generated (`Generated/TokenCommands.swift`) from the fields proto/ marks
/// `source: CALLER_UID` / `CALLER_SESSION` / `GUEST_UID`, so a command cannot lose its check.
/// Commands whose authority is their own content (a password, a code, a refresh token, a
/// provider identity sealed by the provider worker) name no caller and do not conform.
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

/// Admin API commands (`identity.admin.v1`) act for the app's backend: only with a live secret
/// key of the command's own app in the message (`CallerAuthority.checkAppBackend`). Every
/// command of a SECRET_KEY operation conforms (generated).
protocol ActsForAppBackend {
    var appId: String { get }
}

/// The web console's member changes (`CONSOLE_OWNER`): only with the session token of the
/// console user the command names, who holds `owner` in the command's app
/// (`CallerAuthority.checkConsoleOwner`). Generated for each, with its audit action.
protocol ActsForConsoleOwner {
    var appId: String { get }
    var consoleUid: String { get }
    static var auditAction: String { get }
}
