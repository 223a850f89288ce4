import Foundation

/// An invitation link's token (docs/console.md, "Getting in"): 256 random bits, base64url, in
/// the invitation mail's link to `/console/invitation`. Whoever opens the link proves they read
/// mail at the invited address, so the link alone lets them make the console account of that
/// address. Only the token's SHA-256 is stored (`ConsoleInvitationStore`), the link works once
/// and for `lifetimeSeconds`, and removing the member withdraws it.
public enum ConsoleInvitationLink {
    /// A week: long enough for a teammate on leave, short enough that an old mail found later
    /// (a forwarded thread, a shared inbox) opens nothing.
    public static let lifetimeSeconds = 7 * 86_400

    public static func newToken() -> String { Base64URL.encode(SecureRandom.bytes(32)) }

    public static func hash(_ token: String) -> [UInt8] { Digest.sha256("identity-console-invitation\u{0}" + token) }

    /// Whether `token` has the shape `newToken` makes (43 base64url characters, 32 bytes):
    /// anything else is answered without a look into the store.
    public static func isWellFormed(_ token: String) -> Bool {
        token.utf8.count == 43 && Base64URL.decode(token)?.count == 32
    }

    /// The link on the console's `origin` (scheme, host and port).
    public static func url(origin: String, token: String) -> String { origin + "/console/invitation?token=" + token }
}
