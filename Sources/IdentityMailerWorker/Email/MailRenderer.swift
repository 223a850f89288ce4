import Foundation
import IdentityKit

/// Renders a mail from the app's templates (or the defaults) into a MIME message with a plain
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
    static let extraPlaceholders: Set<String> = ["device", "ip", "time", "provider"]

    static let defaults: [String: [String: String]] = alertDefaults.merging([
        "email_code": [
            "subject": "Your sign-in code for {{app_name}}",
            "text": "Your sign-in code for {{app_name}} is {{code}}.\n\nIt expires in 10 minutes and works once.\n{{link}}\n\nIf you did not ask for it, ignore this email.",
            "html": "<p>Your sign-in code for {{app_name}} is <strong>{{code}}</strong>.</p><p>It expires in 10 minutes and works once.</p><p>{{link}}</p><p>If you did not ask for it, ignore this email.</p>",
        ],
        "password_reset": [
            "subject": "Reset your {{app_name}} password",
            "text": "Your password reset code for {{app_name}} is {{code}}.\n{{link}}\n\nIt expires in 10 minutes. If you did not ask to reset your password, ignore this email.",
            "html": "<p>Your password reset code for {{app_name}} is <strong>{{code}}</strong>.</p><p>{{link}}</p><p>It expires in 10 minutes. If you did not ask to reset your password, ignore this email.</p>",
        ],
        "mfa_code": [
            "subject": "Your {{app_name}} security code",
            "text": "Your security code for signing in to {{app_name}} is {{code}}.\n\nIt expires in 10 minutes and works once. If you did not just sign in, change your password.",
            "html": "<p>Your security code for signing in to {{app_name}} is <strong>{{code}}</strong>.</p><p>It expires in 10 minutes and works once. If you did not just sign in, change your password.</p>",
        ],
        "email_verification": [
            "subject": "Verify your email for {{app_name}}",
            "text": "Your verification code for {{app_name}} is {{code}}.\n{{link}}\n\nIt expires in 10 minutes.",
            "html": "<p>Your verification code for {{app_name}} is <strong>{{code}}</strong>.</p><p>{{link}}</p><p>It expires in 10 minutes.</p>",
        ],
    ]) { $1 }

    /// Security alerts (`SecurityAlertKind`): what happened, and what to do if it was not you.
    static let alertDefaults: [String: [String: String]] = {
        let happened: [SecurityAlertKind: (title: String, sentence: String)] = [
            .newSignIn: ("New sign-in to {{app_name}}", "Your {{app_name}} account was signed in to from a new device ({{device}}, {{ip}}) at {{time}}."),
            .passwordChanged: ("Your {{app_name}} password was changed", "The password of your {{app_name}} account was changed at {{time}}."),
            .emailChanged: ("Your {{app_name}} email address was changed", "The email address of your {{app_name}} account was changed at {{time}}."),
            .mfaEnabled: ("Two-step verification turned on", "Two-step verification was turned on for your {{app_name}} account at {{time}}."),
            .mfaDisabled: ("Two-step verification turned off", "Two-step verification was turned off for your {{app_name}} account at {{time}}."),
            .passkeyAdded: ("A passkey was added to {{app_name}}", "A passkey was added to your {{app_name}} account at {{time}}."),
            .passkeyRemoved: ("A passkey was removed from {{app_name}}", "A passkey was removed from your {{app_name}} account at {{time}}."),
            .phoneChanged: ("Your {{app_name}} phone number was changed", "A phone number was linked to your {{app_name}} account at {{time}}."),
            .providerLinked: ("A sign-in method was added to {{app_name}}", "A {{provider}} account was linked to your {{app_name}} account at {{time}}."),
            .providerUnlinked: ("A sign-in method was removed from {{app_name}}", "A {{provider}} account was unlinked from your {{app_name}} account at {{time}}."),
            .backupCodesRenewed: ("New backup codes for {{app_name}}", "New backup codes were made for your {{app_name}} account at {{time}}; the old ones no longer work."),
            .backupCodesLow: ("Few backup codes left for {{app_name}}", "Your {{app_name}} account has few backup codes left: make new ones soon."),
            .mfaCodeReused: ("A used security code was tried on {{app_name}}", "A two-step verification code of your {{app_name}} account that had already been used was entered again ({{device}}, {{ip}}) at {{time}}, and refused. Whoever entered it may know your password."),
        ]
        let advice = "If this was not you, change your password and sign out your other sessions."
        var out: [String: [String: String]] = [:]
        for (kind, text) in happened {
            out[kind.template] = [
                "subject": text.title, "text": text.sentence + "\n\n" + advice,
                "html": "<p>" + text.sentence + "</p><p>" + advice + "</p>",
                "push_title": text.title, "push_body": text.sentence,
            ]
        }
        return out
    }()

    /// A push notification's title and body (plain text, no escaping: not markup).
    func renderPush(kind: String, templates: [String: [String: String]], values: [String: String]) -> (title: String, body: String) {
        let template = { (part: String) in templates[kind]?[part] ?? Self.defaults[kind]?[part] ?? "" }
        return (String(fill(template("push_title"), values, html: false).prefix(200)),
                String(fill(template("push_body"), values, html: false).prefix(1000)))
    }

    func render(kind: String, templates: [String: [String: String]], values: [String: String]) -> Rendered {
        let template = { (part: String) in templates[kind]?[part] ?? Self.defaults[kind]?[part] ?? "{{code}}" }
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

    static func escapeHTML(_ value: String) -> String {
        var out = ""
        for char in value {
            switch char {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(char)
            }
        }
        return out
    }

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

/// A MIME message (RFC 5322 / 2045): multipart/alternative, UTF-8 parts in base64, CRLF lines.
enum MIMEMessage {
    /// `kind` (the template's, e.g. `email_code`, `security_alert_mfa_enabled`) travels as
    /// `X-Identity-Mail-Kind`, so a mailbox rule, a support desk or a test can tell a code from
    /// an alert without reading the text; `Auto-Submitted` (RFC 3834) keeps auto-responders
    /// from answering any of them.
    static func build(fromName: String?, fromAddress: String, to: String, subject: String, text: String, html: String,
                      messageId: String, kind: String = "", date: Date = Date()) -> String {
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
        ] + (kind.isEmpty || !kind.utf8.allSatisfy { $0 == 95 || (97...122).contains($0) } ? [] : ["X-Identity-Mail-Kind: \(kind)"]) + [
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

    private static func encodedWord(_ value: String) -> String {
        "=?UTF-8?B?" + Data(value.utf8).base64EncodedString() + "?="
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
