import Foundation
import XCTest
@testable import IdentityMailerWorker
import IdentityCredentials
@testable import IdentityKit

final class MailRenderingTests: XCTestCase {
    /// Every built-in language has texts for exactly the kinds of the one lists (`MailKind`,
    /// `SmsKind`), which are also what an app may override: a kind added to one without the
    /// others, or a translation that lost a kind, fails here.
    func testEveryLanguageHasEveryKindAndNoOtherKind() {
        XCTAssertEqual(AppSettingsUpdate.templateKinds, MailKind.names + SmsKind.names)
        XCTAssertEqual(Set(MessageTexts.builtIn.keys), ["en", "de", "fr", "es", "pt-BR", "pt", "ja"])
        for (language, texts) in MessageTexts.builtIn {
            XCTAssertEqual(Set(texts.mails.keys), Set(MailKind.all.compactMap { kind -> String? in
                if case .alert = kind { return nil } else { return kind.name }
            }), language)
            XCTAssertEqual(Set(texts.alerts.keys), Set(SecurityAlertKind.allCases), language)
            XCTAssertEqual(Set(texts.sms.keys), Set(SmsKind.names), language)
            XCTAssertFalse(texts.alertAdvice.isEmpty, language)
            for kind in MailKind.names {
                for part in ["subject", "text", "html"] {
                    XCTAssertFalse(MessageTexts.builtInPart(part, kind: kind, language: language)?.isEmpty ?? true,
                                   "\(language) \(kind).\(part)")
                }
            }
        }
    }

    /// A translation keeps every placeholder of the English text and adds none: a German
    /// sign-in mail without `{{code}}` would be a mail without its code.
    func testEveryTranslationHasTheEnglishPlaceholders() {
        let placeholders = { (text: String) -> [String] in
            var found: [String] = []
            var rest = Substring(text)
            while let open = rest.range(of: "{{"), let close = rest[open.upperBound...].range(of: "}}") {
                found.append(String(rest[open.upperBound..<close.lowerBound]))
                rest = rest[close.upperBound...]
            }
            return found.sorted()
        }
        for (language, _) in MessageTexts.builtIn {
            for kind in AppSettingsUpdate.templateKinds {
                for part in AppSettingsUpdate.templateParts {
                    let english = MessageTexts.builtInPart(part, kind: kind, language: "en")
                    let translated = MessageTexts.builtInPart(part, kind: kind, language: language)
                    XCTAssertEqual(english == nil, translated == nil, "\(language) \(kind).\(part)")
                    guard let english, let translated else { continue }
                    XCTAssertEqual(Set(placeholders(translated)), Set(placeholders(english)), "\(language) \(kind).\(part)")
                    XCTAssertEqual(english.components(separatedBy: "\n\n").count, translated.components(separatedBy: "\n\n").count,
                                   "\(language) \(kind).\(part): the paragraphs")
                }
            }
        }
    }

    func testTheLanguageIsTheFirstPreferenceWithTextsThenTheAppDefaultThenEnglish() {
        let plain = MessageTemplates(overrides: [:], defaultLanguage: nil)
        XCTAssertEqual(plain.language(kind: "email_code", preferences: ["pt-BR"]), "pt-BR")
        XCTAssertEqual(plain.language(kind: "email_code", preferences: ["pt-PT"]), "pt")
        XCTAssertEqual(plain.language(kind: "email_code", preferences: ["fr-CA", "de"]), "fr")
        XCTAssertEqual(plain.language(kind: "email_code", preferences: ["it", "de"]), "de")
        XCTAssertEqual(plain.language(kind: "email_code", preferences: ["it"]), "en")
        XCTAssertEqual(plain.language(kind: "email_code", preferences: []), "en")
        let spanish = MessageTemplates(overrides: [:], defaultLanguage: "es")
        XCTAssertEqual(spanish.language(kind: "email_code", preferences: ["it"]), "es")
        // A language only the app has texts for, for this kind only.
        let italian = MessageTemplates(overrides: ["email_code": ["subject.it": "Codice {{code}}"]], defaultLanguage: nil)
        XCTAssertEqual(italian.language(kind: "email_code", preferences: ["it-IT"]), "it")
        XCTAssertEqual(italian.language(kind: "password_reset", preferences: ["it-IT"]), "en")
        XCTAssertEqual(italian.part("subject", kind: "email_code", language: "it"), "Codice {{code}}")
        XCTAssertEqual(italian.part("text", kind: "email_code", language: "it"),
                       MessageTexts.builtInPart("text", kind: "email_code", language: "en"))
    }

    /// A text without a language is the app's text for its default language: an app that set
    /// one before there were languages keeps it for its default, and other languages get theirs.
    func testAnOverrideWithoutALanguageIsTheDefaultLanguagesText() {
        let app = MessageTemplates(overrides: ["email_code": ["subject": "Code {{code}}", "subject.de": "Dein Code {{code}}"]],
                                   defaultLanguage: "en")
        XCTAssertEqual(app.part("subject", kind: "email_code", language: "en"), "Code {{code}}")
        XCTAssertEqual(app.part("subject", kind: "email_code", language: "de"), "Dein Code {{code}}")
        XCTAssertEqual(app.part("subject", kind: "email_code", language: "fr"),
                       MessageTexts.builtInPart("subject", kind: "email_code", language: "fr"))
        XCTAssertEqual(app.part("text", kind: "email_code", language: "de"),
                       MessageTexts.builtInPart("text", kind: "email_code", language: "de"))
    }

    func testHTMLPartEscapesValuesAndTextPartKeepsThem() {
        let templates = MessageTemplates(overrides: [
            "email_code": ["subject": "Code {{code}}", "text": "Hi {{email}}", "html": "<p>Hi {{email}}</p>"],
        ], defaultLanguage: nil)
        let rendered = MailRenderer().render(kind: "email_code", templates: templates, language: "en",
                                             values: ["email": "a&b<c>@example.com", "code": "123456", "app_name": "X", "link": ""])
        XCTAssertEqual(rendered.subject, "Code 123456")
        XCTAssertEqual(rendered.text, "Hi a&b<c>@example.com")
        XCTAssertEqual(rendered.html, "<p>Hi a&amp;b&lt;c&gt;@example.com</p>")
    }

    func testBuiltInTextsFillTheCodeAndAppNameAndMakeEscapedHTML() {
        let templates = MessageTemplates(overrides: [:], defaultLanguage: nil)
        let rendered = MailRenderer().render(kind: "password_reset", templates: templates, language: "fr",
                                             values: ["code": "000123", "app_name": "R&D", "link": "", "email": "e"])
        XCTAssertTrue(rendered.subject.contains("R&D"), rendered.subject)
        XCTAssertTrue(rendered.text.contains("000123"))
        XCTAssertTrue(rendered.html.contains("<strong>000123</strong>"), rendered.html)
        XCTAssertTrue(rendered.html.contains("R&amp;D") && !rendered.html.contains("R&D"), rendered.html)
        XCTAssertTrue(rendered.html.hasPrefix("<p>") && rendered.html.hasSuffix("</p>"), rendered.html)
    }

    /// A console invitation names the app, the role, the inviter and the console's address,
    /// each escaped in the HTML part (an app's name is its owners' text).
    func testAConsoleInvitationNamesTheAppRoleInviterAndConsoleLink() {
        let templates = MessageTemplates(overrides: [:], defaultLanguage: nil)
        let rendered = MailRenderer().render(kind: "console_invitation", templates: templates, language: "en", values: [
            "app_name": "Console", "code": "", "email": "new@example.com", "link": "https://id.example.com/console",
            "member_app": "Shop <b>", "role": "admin", "inviter": "lead@example.com",
        ])
        XCTAssertTrue(rendered.subject.contains("lead@example.com") && rendered.subject.contains("Shop <b>"), rendered.subject)
        for part in ["admin", "Shop <b>", "lead@example.com", "new@example.com", "https://id.example.com/console"] {
            XCTAssertTrue(rendered.text.contains(part), part)
        }
        XCTAssertTrue(rendered.html.contains("Shop &lt;b&gt;") && !rendered.html.contains("<b>"), rendered.html)
        XCTAssertFalse(rendered.text.contains("{{"), rendered.text)
    }

    /// RFC 2047: each encoded word at most 75 characters, split between characters, each
    /// decoding to valid UTF-8, together the subject.
    func testALongSubjectBecomesSeveralEncodedWordsThatDecodeBack() throws {
        let subject = "Rezepte und Gerichte der ganzen Welt のログインコード — 🍣 und mehr"
        let header = MIMEMessage.encodeHeader(subject)
        let words = header.components(separatedBy: "\r\n ")
        XCTAssertGreaterThan(words.count, 1)
        var decoded = ""
        for word in words {
            XCTAssertLessThanOrEqual(word.count, 75, word)
            XCTAssertTrue(word.hasPrefix("=?UTF-8?B?") && word.hasSuffix("?="), word)
            let base64 = String(word.dropFirst(10).dropLast(2))
            decoded += try XCTUnwrap(String(data: try XCTUnwrap(Data(base64Encoded: base64)), encoding: .utf8))
        }
        XCTAssertEqual(decoded, subject)
        XCTAssertEqual(MIMEMessage.encodeHeader("Plain ASCII"), "Plain ASCII")
        let mime = MIMEMessage.build(fromName: nil, fromAddress: "a@b.co", to: "c@d.co", subject: subject, text: "t",
                                     html: "h", messageId: "m", language: "ja")
        XCTAssertTrue(mime.contains("\r\nContent-Language: ja\r\n"))
        XCTAssertFalse(MIMEMessage.build(fromName: nil, fromAddress: "a@b.co", to: "c@d.co", subject: "s", text: "t",
                                         html: "h", messageId: "m", language: "x\r\nBcc: e@f.co").contains("Bcc"))
    }

    func testSmsSegmentsCountGSM7AndUCS2AsTheBillDoes() {
        XCTAssertEqual(SmsSegments(""), SmsSegments(encoding: .gsm7, count: 0))
        XCTAssertEqual(SmsSegments(String(repeating: "a", count: 160)), SmsSegments(encoding: .gsm7, count: 1))
        XCTAssertEqual(SmsSegments(String(repeating: "a", count: 161)), SmsSegments(encoding: .gsm7, count: 2))
        XCTAssertEqual(SmsSegments(String(repeating: "a", count: 306)), SmsSegments(encoding: .gsm7, count: 2))
        XCTAssertEqual(SmsSegments(String(repeating: "a", count: 307)), SmsSegments(encoding: .gsm7, count: 3))
        // An extension character costs two septets: 80 euro signs fill one segment, 81 do not.
        XCTAssertEqual(SmsSegments(String(repeating: "€", count: 80)), SmsSegments(encoding: .gsm7, count: 1))
        XCTAssertEqual(SmsSegments(String(repeating: "€", count: 81)), SmsSegments(encoding: .gsm7, count: 2))
        XCTAssertEqual(SmsSegments("123456 ist Ihr Anmeldecode für Rezepte. Er ist 10 Minuten lang gültig.").encoding, .gsm7)
        // One character outside GSM-7 makes the whole text UCS-2.
        XCTAssertEqual(SmsSegments("código " + String(repeating: "a", count: 63)), SmsSegments(encoding: .ucs2, count: 1))
        XCTAssertEqual(SmsSegments(String(repeating: "コ", count: 71)), SmsSegments(encoding: .ucs2, count: 2))
        // An emoji is two UTF-16 units, never split: 33 of them (66 units) and one more need two parts.
        XCTAssertEqual(SmsSegments(String(repeating: "🍣", count: 35)), SmsSegments(encoding: .ucs2, count: 1))
        XCTAssertEqual(SmsSegments(String(repeating: "🍣", count: 36)), SmsSegments(encoding: .ucs2, count: 2))
    }

    func testMagicLinkEncodesItsValues() {
        XCTAssertEqual(MailRenderer.magicLink(deepLink: "https://app.example/auth", email: "jane+x@example.com", code: "012345"),
                       "https://app.example/auth?mode=sign_in&email=jane%2Bx%40example.com&code=012345")
        XCTAssertTrue(MailRenderer.magicLink(deepLink: "https://a.example/?x=1", email: "e@x.co", code: "1").hasPrefix(
            "https://a.example/?x=1&mode=sign_in"))
    }

    func testMIMEMessageHasBothPartsAndEncodedHeaders() throws {
        let mime = MIMEMessage.build(fromName: "Récipes", fromAddress: "hello@r.example", to: "a@b.co",
                                     subject: "Code", text: "plain ✓", html: "<p>html</p>", messageId: "mail_1")
        XCTAssertTrue(mime.contains("From: =?UTF-8?B?"))
        XCTAssertTrue(mime.contains("Content-Type: text/plain; charset=utf-8"))
        XCTAssertTrue(mime.contains("Content-Type: text/html; charset=utf-8"))
        XCTAssertTrue(mime.contains(Data("plain ✓".utf8).base64EncodedString()))
        // SMTP wants CRLF everywhere: every line feed of the message ends a CRLF pair (the
        // bodies are base64, so a line feed in a part's text cannot reach the wire either).
        let multiline = MIMEMessage.build(fromName: "A", fromAddress: "a@b.co", to: "c@d.co", subject: "S",
                                          text: "one\ntwo\r\nthree\n", html: "<p>a</p>\n<p>b</p>", messageId: "m2")
        for message in [mime, multiline] {
            let bytes = Array(message.utf8)
            XCTAssertTrue(bytes.contains(10))
            for index in bytes.indices where bytes[index] == 10 {
                XCTAssertTrue(index > 0 && bytes[index - 1] == 13, "bare line feed at byte \(index)")
            }
            XCTAssertFalse(message.contains("one\ntwo"), "a part's text goes out encoded, not raw")
        }
        let colon = MIMEMessage.build(fromName: "Recipes, Inc.", fromAddress: "a@b.co", to: "c@d.co",
                                      subject: "Code for X: 123456", text: "", html: "", messageId: "m")
        XCTAssertTrue(colon.contains("Subject: Code for X: 123456\r\n"), "a subject is never quoted")
        XCTAssertTrue(colon.contains("From: \"Recipes, Inc.\" <a@b.co>\r\n"), "a display name with specials is")
    }

    func testDevTransportWritesAnEMLFile() throws {
        let directory = NSTemporaryDirectory() + "mail-test-" + UUID().uuidString
        try FileTransport(directory: directory).deliver(from: "a@b.co", to: "c@d.co", message: "Subject: x\r\n\r\nbody",
                                                        messageId: "mail_01abc")
        let written = try String(contentsOfFile: directory + "/mail_01abc.eml", encoding: .utf8)
        XCTAssertEqual(written, "Subject: x\r\n\r\nbody")
        try? FileManager.default.removeItem(atPath: directory)
    }

    func testSixDigitCodesAreUniformlyShaped() {
        for _ in 0..<200 {
            let code = VerificationCodeStore.newCode()
            XCTAssertEqual(code.count, 6)
            XCTAssertTrue(code.allSatisfy(\.isNumber))
        }
    }
}
