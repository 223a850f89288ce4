import Foundation

/// Renders a mail from the app's templates (or the built-in texts, `MessageTexts`): a plain
/// text and an HTML part, and a push notification's title and body from the `push_title` and
/// `push_body` parts. Placeholders are `{{app_name}}`, `{{code}}`, `{{link}}`, `{{email}}`, and
/// for security alerts `{{device}}` (the sign-in's user agent), `{{ip}}`, `{{time}}`, `{{provider}}` (links); in the
/// HTML part every value is escaped, so no user-provided text becomes markup. Here, not in the
/// mailer, so that the console's template preview renders exactly what the mailer sends.
public struct MailRenderer: Sendable {
    public init() {}

    public struct Rendered: Sendable {
        public let subject: String
        public let text: String
        public let html: String
    }

    /// The placeholders a command may fill besides the code (`SendEmail.values`, `SendPush.values`).
    public static let extraPlaceholders: Set<String> = ["device", "ip", "time", "provider", "member_app", "role", "inviter"]

    /// A push notification's title and body in `language` (plain text, no escaping: not markup).
    public func renderPush(kind: String, templates: MessageTemplates, language: String,
                    values: [String: String]) -> (title: String, body: String) {
        let template = { (part: String) in templates.part(part, kind: kind, language: language) ?? "" }
        return (String(fill(template("push_title"), values, html: false).prefix(200)),
                String(fill(template("push_body"), values, html: false).prefix(1000)))
    }

    /// The mail of `kind` in `language` (`MessageTemplates.language`).
    public func render(kind: String, templates: MessageTemplates, language: String, values: [String: String]) -> Rendered {
        let template = { (part: String) in templates.part(part, kind: kind, language: language) ?? "{{code}}" }
        return Rendered(subject: fill(template("subject"), values, html: false).replacingOccurrences(of: "\n", with: " "),
                        text: fill(template("text"), values, html: false),
                        html: fill(template("html"), values, html: true))
    }

    /// An SMS of `kind` in `language`: its one `text` part.
    public func renderSms(kind: String, templates: MessageTemplates, language: String, values: [String: String]) -> String {
        fill(templates.part("text", kind: kind, language: language) ?? "{{code}}", values, html: false)
    }

    private func fill(_ template: String, _ values: [String: String], html: Bool) -> String {
        var out = template
        for (name, value) in values {
            out = out.replacingOccurrences(of: "{{\(name)}}", with: html ? Self.escapeHTML(value) : value)
        }
        return out
    }

    public static func escapeHTML(_ value: String) -> String { HTMLText.escape(value) }

    /// The magic link: `<deep link>?mode=sign_in&email=…&code=…`, values percent-encoded.
    public static func magicLink(deepLink: String, email: String, code: String) -> String {
        let separator = deepLink.contains("?") ? "&" : "?"
        return deepLink + separator + "mode=sign_in&email=" + percentEncode(email) + "&code=" + percentEncode(code)
    }

    /// The mode of the link a mail kind carries, when the app has a deep link: a sign-in code
    /// signs in, a reset code resets, a verification code verifies.
    public static let linkModes = ["email_code": "sign_in", "password_reset": "reset_password", "email_verification": "verify_email"]

    /// `<deep link>?mode=…&email=…&code=…&token=…`: the address and code as the magic link has
    /// them, and both in one `token` (`MailActionToken`) for clients that read a single value.
    public static func actionLink(deepLink: String, mode: String, email: String, code: String) -> String {
        let separator = deepLink.contains("?") ? "&" : "?"
        return deepLink + separator + "mode=" + mode + "&email=" + percentEncode(email) + "&code=" + percentEncode(code)
            + "&token=" + MailActionToken.encode(email: email, code: code)
    }

    public static func percentEncode(_ value: String) -> String {
        var out = ""
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                 UInt8(ascii: "~"):
                out.unicodeScalars.append(UnicodeScalar(byte))
            default:
                out += String(format: "%%%02X", byte)
            }
        }
        return out
    }
}
