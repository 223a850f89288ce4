import Foundation
import IdentityKit

<<<<<<< HEAD:Sources/IdentityMailerWorker/Email/MIMEMessage.swift
=======
/// Renders a mail from the app's templates (or the built-in texts, `MessageTexts`) into a MIME message with a plain
/// text and an HTML part, and a push notification's title and body from the `push_title` and
/// `push_body` parts. Placeholders are `{{app_name}}`, `{{code}}`, `{{link}}`, `{{email}}`, and
/// for security alerts `{{device}}` (the sign-in's user agent), `{{ip}}`, `{{time}}`, `{{provider}}` (links); in the
/// HTML part every value is escaped, so no user-provided text becomes markup.
struct MailRenderer: Sendable {
    struct Rendered: Sendable {
        let subject: String
        let text: String
        let html: String
    }

    /// The placeholders a command may fill besides the code (`SendEmail.values`, `SendPush.values`).
    static let extraPlaceholders: Set<String> = ["device", "ip", "time", "provider", "member_app", "role", "inviter"]

    /// A push notification's title and body in `language` (plain text, no escaping: not markup).
    func renderPush(kind: String, templates: MessageTemplates, language: String,
                    values: [String: String]) -> (title: String, body: String) {
        let template = { (part: String) in templates.part(part, kind: kind, language: language) ?? "" }
        return (String(fill(template("push_title"), values, html: false).prefix(200)),
                String(fill(template("push_body"), values, html: false).prefix(1000)))
    }

    /// The mail of `kind` in `language` (`MessageTemplates.language`).
    func render(kind: String, templates: MessageTemplates, language: String, values: [String: String]) -> Rendered {
        let template = { (part: String) in templates.part(part, kind: kind, language: language) ?? "{{code}}" }
        return Rendered(subject: fill(template("subject"), values, html: false).replacingOccurrences(of: "\n", with: " "),
                        text: fill(template("text"), values, html: false),
                        html: fill(template("html"), values, html: true))
    }

    private func fill(_ template: String, _ values: [String: String], html: Bool) -> String {
        var out = template
        for (name, value) in values {
            out = out.replacingOccurrences(of: "{{\(name)}}", with: html ? Self.escapeHTML(value) : value)
        }
        return out
    }

    static func escapeHTML(_ value: String) -> String { HTMLText.escape(value) }

    /// The magic link: `<deep link>?mode=sign_in&email=…&code=…`, values percent-encoded.
    static func magicLink(deepLink: String, email: String, code: String) -> String {
        let separator = deepLink.contains("?") ? "&" : "?"
        return deepLink + separator + "mode=sign_in&email=" + percentEncode(email) + "&code=" + percentEncode(code)
    }

    /// The mode of the link a mail kind carries, when the app has a deep link: a sign-in code
    /// signs in, a reset code resets, a verification code verifies.
    static let linkModes = ["email_code": "sign_in", "password_reset": "reset_password", "email_verification": "verify_email"]

    /// `<deep link>?mode=…&email=…&code=…&token=…`: the address and code as the magic link has
    /// them, and both in one `token` (`MailActionToken`) for clients that read a single value.
    static func actionLink(deepLink: String, mode: String, email: String, code: String) -> String {
        let separator = deepLink.contains("?") ? "&" : "?"
        return deepLink + separator + "mode=" + mode + "&email=" + percentEncode(email) + "&code=" + percentEncode(code)
            + "&token=" + MailActionToken.encode(email: email, code: code)
    }

    static func percentEncode(_ value: String) -> String {
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

>>>>>>> wt-members:Sources/IdentityMailerWorker/Email/MailRenderer.swift
/// A MIME message (RFC 5322 / 2045): multipart/alternative, UTF-8 parts in base64, CRLF lines.
enum MIMEMessage {
    /// `kind` (the template's, e.g. `email_code`, `security_alert_mfa_enabled`) travels as
    /// `X-Identity-Mail-Kind`, so a mailbox rule, a support desk or a test can tell a code from
    /// an alert without reading the text; `Auto-Submitted` (RFC 3834) keeps auto-responders
    /// from answering any of them. `language` (BCP 47) is the texts' `Content-Language` (RFC 3282).
    static func build(fromName: String?, fromAddress: String, to: String, subject: String, text: String, html: String,
                      messageId: String, kind: String = "", language: String = "", date: Date = Date()) -> String {
        let boundary = "b_" + Base64URL.encode(SecureRandom.bytes(12))
        let from = fromName.map { "\(displayName($0)) <\(fromAddress)>" } ?? fromAddress
        var lines = [
            "From: \(from)",
            "To: <\(to)>",
            "Subject: \(encodeHeader(subject))",
            "Date: \(rfc5322Date(date))",
            "Message-ID: <\(messageId)@identity.local>",
            "MIME-Version: 1.0",
            "Auto-Submitted: auto-generated",
        ] + (LanguageTag.normalized(language) == nil ? [] : ["Content-Language: \(language)"]) + (kind.isEmpty || !kind.utf8.allSatisfy { $0 == 95 || (97...122).contains($0) } ? [] : ["X-Identity-Mail-Kind: \(kind)"]) + [
            "Content-Type: multipart/alternative; boundary=\"\(boundary)\"",
            "",
        ]
        for (type, body) in [("text/plain", text), ("text/html", html)] {
            lines += ["--\(boundary)", "Content-Type: \(type); charset=utf-8", "Content-Transfer-Encoding: base64", ""]
            lines += wrap(Data(body.utf8).base64EncodedString())
        }
        lines.append("--\(boundary)--")
        return lines.joined(separator: "\r\n") + "\r\n"
    }

    /// Printable ASCII stays as is (a subject may hold any of it); anything else becomes an
    /// RFC 2047 encoded word.
    static func encodeHeader(_ value: String) -> String {
        isPrintableASCII(value) ? value : encodedWord(value)
    }

    /// A sender's display name: quoted when it holds RFC 5322 specials, encoded when not ASCII.
    static func displayName(_ value: String) -> String {
        guard isPrintableASCII(value), !value.contains("\"") else { return encodedWord(value) }
        return value.contains(where: { "(),:;<>@[]\\.".contains($0) }) ? "\"\(value)\"" : value
    }

    /// RFC 2047 encoded words, split between characters, never inside one, and folded onto
    /// continuation lines: 36 bytes of UTF-8 make 48 of base64, a word of 60 characters, so
    /// even the first line (`Subject: ` and a word) stays under RFC 2047's 76.
    private static func encodedWord(_ value: String) -> String {
        var words: [String] = []
        var chunk = ""
        for character in value {
            if chunk.utf8.count + String(character).utf8.count > 36, !chunk.isEmpty {
                words.append(chunk)
                chunk = ""
            }
            chunk.append(character)
        }
        if !chunk.isEmpty { words.append(chunk) }
        return words.map { "=?UTF-8?B?" + Data($0.utf8).base64EncodedString() + "?=" }.joined(separator: "\r\n ")
    }

    private static func isPrintableASCII(_ value: String) -> Bool {
        value.unicodeScalars.allSatisfy { $0.value >= 0x20 && $0.value < 0x7f }
    }

    private static func wrap(_ text: String) -> [String] {
        var lines: [String] = []
        var rest = Substring(text)
        while !rest.isEmpty {
            lines.append(String(rest.prefix(76)))
            rest = rest.dropFirst(76)
        }
        return lines
    }

    private static func rfc5322Date(_ date: Date) -> String {
        var seconds = time_t(date.timeIntervalSince1970)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        let time = String(format: "%02d:%02d:%02d", Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec))
        return "\(days[Int(parts.tm_wday)]), \(String(format: "%02d", Int(parts.tm_mday))) \(months[Int(parts.tm_mon)]) "
            + "\(Int(parts.tm_year) + 1900) \(time) +0000"
    }
}
