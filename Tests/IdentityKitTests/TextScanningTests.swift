import Foundation
import XCTest
@testable import IdentityKit

/// `TextScanning` replaces Foundation's NSString-backed helpers on the request path: each case is
/// checked against what Foundation answers, so the rewrite changes the cost and nothing else.
final class TextScanningTests: XCTestCase {
    func testTrimmedMatchesFoundation() {
        let samples = ["  a b  ", "\tvalue\t", "", "   ", "x", " \u{00A0}nbsp\u{2003} ", "line\n", "\r\nboth \n",
                       "sk_key", "a\u{2003}b", "\u{2003}a", "a\u{00A0}", "é x", "x\u{0301}"]
        for sample in samples {
            XCTAssertEqual(TextScanning.trimmed(sample), sample.trimmingCharacters(in: .whitespaces), sample.debugDescription)
            XCTAssertEqual(TextScanning.trimmed(sample, newlines: true),
                           sample.trimmingCharacters(in: .whitespacesAndNewlines), sample.debugDescription)
        }
        XCTAssertEqual(TextScanning.trimmed(" a; b ".split(separator: ";")[1]), "b")
    }

    func testPercentDecodedMatchesFoundation() {
        let samples = ["plain", "a%20b", "%E2%82%AC", "a+b", "%zz", "%4", "%", "100%25", "%C3", "%ff", "%2B%2b", ""]
        for sample in samples {
            XCTAssertEqual(TextScanning.percentDecoded(sample[...]), sample.removingPercentEncoding, sample)
        }
    }

    func testFormValue() {
        func value(_ body: String, _ name: String = "token") -> String? {
            TextScanning.formValue(name, in: Array(body.utf8))
        }
        XCTAssertEqual(value("token=abc"), "abc")
        XCTAssertEqual(value("token_type_hint=access_token&token=a.b-c_d"), "a.b-c_d")
        XCTAssertEqual(value("token=a+b%2Bc"), "a b+c", "+ is a space, %2B a plus")
        XCTAssertEqual(value("to%6Ben=x"), "x", "the name is decoded too")
        XCTAssertEqual(value("token=first&token=second"), "first")
        XCTAssertEqual(value("token="), "")
        XCTAssertNil(value("tokenx=1&xtoken=2"))
        XCTAssertNil(value("token"), "a name without = has no value")
        XCTAssertNil(value("&&"))
        XCTAssertNil(value(""))
        XCTAssertNil(value("token=%E2%82"), "a cut UTF-8 sequence does not decode")
        XCTAssertNil(value("token=%G0"))
        XCTAssertEqual(value("a=1&&token=%E2%82%AC&b"), "€")
        XCTAssertNil(TextScanning.formValue("token", in: Array("token=".utf8) + [0xFF]),
                     "a value with nothing to decode is still checked as UTF-8")
        XCTAssertEqual(value("tok+en=1&tok en=2", "tok en"), "1", "+ in a name is a space")
    }

    /// The pre-scan before a form is parsed: it may say yes wrongly, never no wrongly.
    func testMayHoldField() {
        func may(_ body: String) -> Bool {
            Array(body.utf8).withUnsafeBytes { TextScanning.mayHoldField("client_secret", inForm: $0) }
        }
        XCTAssertTrue(may("client_id=a&client_secret=sk"))
        XCTAssertTrue(may("client_secret"), "at the very start and end")
        XCTAssertTrue(may("client%5Fsecret=sk"), "an escaped name could be it")
        XCTAssertTrue(may("client+secret=sk"), "a + could be part of it")
        XCTAssertFalse(may("token=abc&client_id=a"))
        XCTAssertFalse(may("client_secre"), "shorter than the name")
        XCTAssertFalse(may(""))
        for body in ["client_secret=x", "a=1&client_secret=x", "client%5Fsecret=x"] {
            XCTAssertNotNil(TextScanning.formValue("client_secret", in: Array(body.utf8)))
            XCTAssertTrue(may(body), "a body whose field parses must pass the pre-scan: \(body)")
        }
    }

    func testHasNUL() {
        XCTAssertFalse(TextScanning.hasNUL(String(repeating: "a", count: 700)))
        XCTAssertTrue(TextScanning.hasNUL(String(repeating: "a", count: 700) + "\u{0}b"))
        XCTAssertFalse(TextScanning.hasNUL(""))
    }
}
