import Foundation
import XCTest
@testable import IdentityGateway
@testable import IdentityKit

/// Each field format of options.proto is said twice by nature: as JSON Schema in the API document
/// (`DeclaredOperation.formatSchemas`) and as the Swift check the body reader runs. Here each
/// check is probed at and around the schema's bounds and must agree with the schema on every
/// probe, so neither can change alone.
final class DeclaredFormatsTests: XCTestCase {
    func testUsernameCheckIsThePattern() throws {
        var probes = ["ab", "abc", "a.b_c", "A9_.", "ab-c", "ab c", "abé", String(repeating: "a", count: 32)]
        probes += [String(repeating: "a", count: 33), "", "abc\n"]
        try agree("username", probes) { FieldRules.username($0) == nil }
    }

    func testE164CheckIsThePattern() throws {
        let probes = ["+14155550123", "+123456", "+1234567", "+123456789012345", "+1234567890123456", "+0123456789",
                      "14155550123", "+1415555012a", "+", "++14155550123", "+1 415 555 0123"]
        try agree("e164", probes) { AdminFields.phone($0) == nil }
    }

    func testGuestSecretCheckIsTheLengths() throws {
        try agree("guest_secret", [31, 32, 43, 256, 257].map(Self.random)) { FieldRules.guestSecret($0) == nil }
    }

    func testPasswordPolicyIsTheLengths() throws {
        try agree("password", [7, 8, 9, 256, 257].map(Self.random)) { PasswordPolicy.problem(with: $0) == nil }
    }

    func testEmailCheckIsTheMaximumLength() throws {
        let domain = { (length: Int) in String(repeating: "d", count: length - 4) + ".com" }
        // A local part of 64 and a domain of one long label plus .com: 254 and 255 characters.
        let probes = [String(repeating: "a", count: 64) + "@" + domain(189), String(repeating: "a", count: 64) + "@" + domain(190)]
        try agree("email", probes) { EmailAddress.isValid($0) }
    }

    /// The pattern says the scheme; the check also wants a host, which a pattern would say badly.
    func testURLCheckIsThePatternsScheme() throws {
        let probes = ["https://example.com/done", "HTTP://example.com", "ftp://example.com", "example.com", "javascript:alert(1)"]
        try agree("url", probes) { FieldRules.httpURL($0) == nil }
    }

    // MARK: -

    /// Base64url text of `count` characters that looks random (every probe passes any randomness rule).
    private static func random(_ count: Int) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        var generator = SystemRandomNumberGenerator()
        return String((0..<count).map { _ in alphabet[Int(generator.next() % UInt64(alphabet.count))] })
    }

    private func agree(_ format: String, _ probes: [String], file: StaticString = #filePath, line: UInt = #line,
                       _ check: (String) -> Bool) throws {
        let text = try XCTUnwrap(DeclaredOperation.formatSchemas[format], "no format \(format)", file: file, line: line)
        let schema = try XCTUnwrap(JSONValue.parse(Data(text.utf8)), file: file, line: line)
        XCTAssertFalse(schema == .object([:]), "\(format) adds nothing to the schema", file: file, line: line)
        for probe in probes {
            XCTAssertEqual(check(probe), try allows(schema, probe), "\(format): \(probe.debugDescription)", file: file, line: line)
        }
    }

    /// Whether the schema's string constraints allow `value` (lengths in Unicode scalars, as JSON Schema counts).
    private func allows(_ schema: JSONValue, _ value: String) throws -> Bool {
        let length = value.unicodeScalars.count
        if case .number(let minimum)? = schema["minLength"], length < Int(minimum) { return false }
        if case .number(let maximum)? = schema["maxLength"], length > Int(maximum) { return false }
        if case .string(let pattern)? = schema["pattern"] {
            let expression = try NSRegularExpression(pattern: pattern)
            let range = NSRange(value.startIndex..., in: value)
            guard let match = expression.firstMatch(in: value, range: range) else { return false }
            // JSON Schema's `$` (ECMA-262) is the end of the text; ICU's also matches before a final newline.
            if pattern.hasSuffix("$"), match.range.upperBound != range.upperBound { return false }
        }
        return true
    }
}
