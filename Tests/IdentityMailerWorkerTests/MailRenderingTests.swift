import Foundation
import XCTest
@testable import IdentityMailerWorker
import IdentityCredentials
import IdentityKit

final class MailRenderingTests: XCTestCase {
    /// The renderer has default texts for exactly the kinds of the one list (`MailKind`), which
    /// is also what an app may override: a kind added to one without the other fails here.
    func testEveryMailKindHasDefaultTextsAndNoOtherKindDoes() {
        XCTAssertEqual(Set(MailRenderer.defaults.keys), Set(MailKind.names))
        XCTAssertEqual(AppSettingsUpdate.templateKinds, MailKind.names)
        for kind in MailKind.names {
            XCTAssertFalse(MailRenderer.defaults[kind]?["subject"]?.isEmpty ?? true, kind)
        }
    }

    func testHTMLPartEscapesValuesAndTextPartKeepsThem() {
        let rendered = MailRenderer().render(kind: "email_code", templates: [
            "email_code": ["subject": "Code {{code}}", "text": "Hi {{email}}", "html": "<p>Hi {{email}}</p>"],
        ], values: ["email": "a&b<c>@example.com", "code": "123456", "app_name": "X", "link": ""])
        XCTAssertEqual(rendered.subject, "Code 123456")
        XCTAssertEqual(rendered.text, "Hi a&b<c>@example.com")
        XCTAssertEqual(rendered.html, "<p>Hi a&amp;b&lt;c&gt;@example.com</p>")
    }

    func testDefaultsFillTheCodeAndAppName() {
        let rendered = MailRenderer().render(kind: "password_reset", templates: [:],
                                             values: ["code": "000123", "app_name": "Recipes", "link": "", "email": "e"])
        XCTAssertTrue(rendered.subject.contains("Recipes"))
        XCTAssertTrue(rendered.text.contains("000123"))
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
