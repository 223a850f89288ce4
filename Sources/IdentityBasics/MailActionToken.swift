import Foundation

/// The one opaque `token` of a mailed link for clients that take a single value from it
/// (seed 003's `resetPassword(token, newPassword)`, `verifyResetToken(token)`,
/// `verifyEmail(token)`): the address and the code together, base64url. It is no secret beyond
/// the code it carries — the code's own rules (10 minutes, single use, guess limits per code and
/// per address) are what protect it — and it names the account the code was sent for, so the
/// client needs no second field.
public enum MailActionToken {
    public static func encode(email: String, code: String) -> String {
        Base64URL.encode(Array((email + "\n" + code).utf8))
    }

    /// (email, code) of a token this service mailed; nil for anything else (a bare code).
    public static func decode(_ token: String) -> (email: String, code: String)? {
        guard token.utf8.count <= 512, let bytes = Base64URL.decode(token),
              let text = String(bytes: bytes, encoding: .utf8) else { return nil }
        let parts = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else { return nil }
        return (String(parts[0]), String(parts[1]))
    }
}
