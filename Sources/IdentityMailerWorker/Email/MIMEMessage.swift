import Foundation
import IdentityKit

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
