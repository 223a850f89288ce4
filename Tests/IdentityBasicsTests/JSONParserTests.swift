import Foundation
import XCTest
@testable import IdentityBasics

/// The strict parser behind `JSONValue.parse`: an RFC 8259 selection in the manner of
/// JSONTestSuite (y = must accept, n = must refuse), the limits, and the hostile bodies of
/// issue 10 (their cost is measured outside the unit tests: no timing assertions here).
final class JSONParserTests: XCTestCase {
    private func parse(_ text: String, maximumBytes: Int = JSONParser.defaultMaximumBytes,
                       maximumDepth: Int = JSONParser.defaultMaximumDepth) throws(JSONParser.Failure) -> JSONValue {
        try JSONParser.parse(Data(text.utf8), maximumBytes: maximumBytes, maximumDepth: maximumDepth)
    }

    private func failure(_ bytes: [UInt8], maximumBytes: Int = JSONParser.defaultMaximumBytes,
                         maximumDepth: Int = JSONParser.defaultMaximumDepth) -> JSONParser.Failure? {
        do {
            _ = try JSONParser.parse(bytes, maximumBytes: maximumBytes, maximumDepth: maximumDepth)
            return nil
        } catch {
            return error
        }
    }

    private func failure(_ text: String, maximumBytes: Int = JSONParser.defaultMaximumBytes,
                         maximumDepth: Int = JSONParser.defaultMaximumDepth) -> JSONParser.Failure? {
        failure(Array(text.utf8), maximumBytes: maximumBytes, maximumDepth: maximumDepth)
    }

    private func nested(_ depth: Int, open: String, close: String, inner: String = "") -> String {
        String(repeating: open, count: depth) + inner + String(repeating: close, count: depth)
    }

    // MARK: - accepted

    func testAcceptedDocumentsAndTheirValues() throws {
        let cases: [(String, JSONValue)] = [
            ("[]", .array([])),
            ("{}", .object([:])),
            (#"{"":1}"#, .object(["": .number(1)])),
            (#""x""#, .string("x")),
            ("0", .number(0)),
            ("-0", .number(-0.0)),
            ("12", .number(12)),
            ("-12", .number(-12)),
            ("1.5", .number(1.5)),
            ("1.5e10", .number(1.5e10)),
            ("1E-2", .number(0.01)),
            ("-1.0e+2", .number(-100)),
            ("0.0", .number(0)),
            ("true", .bool(true)),
            ("false", .bool(false)),
            ("null", .null),
            (" \t\r\n[ 1 , 2 ]\n\t\r ", .array([.number(1), .number(2)])),
            (#"{"a" : [1, {"b": null}], "c": "d"}"#,
             .object(["a": .array([.number(1), .object(["b": .null])]), "c": .string("d")])),
            (#""\"\\\/\b\f\n\r\t""#, .string("\"\\/\u{08}\u{0C}\n\r\t")),
            (#""\u00e9\u00E9é""#, .string("ééé")),
            (#""\u0000""#, .string("\u{0}")),
            (#""\ud83d\ude00 😀""#, .string("😀 😀")),
            (#""\uDBFF\uDFFF""#, .string("\u{10FFFF}")),
            (#""\uFFFF""#, .string("\u{FFFF}")),
            (#""a\u0041b""#, .string("aAb")),
            (#"[{"a":1},{"a":2}]"#, .array([.object(["a": .number(1)]), .object(["a": .number(2)])])),
            (#"{"a":{"a":1}}"#, .object(["a": .object(["a": .number(1)])])),
            (#"{"a":1,"A":2}"#, .object(["a": .number(1), "A": .number(2)])),
        ]
        for (text, expected) in cases {
            XCTAssertEqual(try parse(text), expected, text)
            XCTAssertEqual(JSONValue.parse(Data(text.utf8)), expected, text)
        }
        // -0 keeps its sign, as the text says.
        guard case .number(let negativeZero) = try parse("-0") else { return XCTFail("-0") }
        XCTAssertEqual(negativeZero.sign, .minus)
    }

    func testNumbersAreDoublesAndOverflowIsRefused() throws {
        XCTAssertEqual(try parse("999999999999999"), .number(999_999_999_999_999))
        XCTAssertEqual(try parse("9999999999999999"), .number(1e16))
        XCTAssertEqual(try parse("-9007199254740993"), .number(-9_007_199_254_740_992))
        XCTAssertEqual(try parse("123456789012345678901234567890"), .number(1.2345678901234568e29))
        XCTAssertEqual(try parse("1.7976931348623157e308"), .number(.greatestFiniteMagnitude))
        XCTAssertEqual(try parse("1e-400"), .number(0))
        XCTAssertEqual(try parse("4.9e-324"), .number(.leastNonzeroMagnitude))
        XCTAssertEqual(try parse("0." + String(repeating: "0", count: 1000) + "1e1001"), .number(1))
        for overflow in ["1e400", "-1e400", "1.8e308", "1" + String(repeating: "0", count: 400),
                         "1E+99999999999999999999"] {
            XCTAssertEqual(failure(overflow), .invalidNumber(offset: 0), overflow)
        }
    }

    // MARK: - refused

    func testRefusedDocuments() {
        let refused = [
            "", " ", "\n", "[", "]", "{", "}", "[1,]", "[1,,2]", "[,1]", "[,]", #"{"a":1,}"#, #"{,}"#,
            "[1 2]", #"{"a" 1}"#, #"{"a":}"#, #"{"a"}"#, "{a:1}", "{'a':1}", "{1:1}", #"{"a":1 "b":2}"#,
            "01", "-01", "00", "1.", ".5", "+1", "1e", "1e+", "1.e3", "-", "--1", "- 1", "0x10", "1_000",
            "NaN", "-NaN", "Infinity", "-Infinity", "inf", "[NaN]",
            "tru", "True", "nul", "NULL", "falsey", "[true false]",
            #""abc"#, #"["abc]"#, #""\x""#, #""\'""#, #""\a""#, #""\u12""#, #""\u12G4""#, #""\U0041""#, #""\"#,
            #""\ud800""#, #""\udc00""#, #""\ud800\u0041""#, #""\ud800x""#, #""\udbff\udbff""#, #""\ud800\""#,
            "\"a\tb\"", "\"a\nb\"", "\"a\u{1F}b\"", "\"a\u{0}b\"",
            "[1]x", "[1][2]", "1 2", #""a" "b""#, "[1]//", "/* c */ 1", "[1] /* c */",
            "\u{FEFF}[1]", "[\u{A0}1]", "[\u{0C}1]", "[\u{0B}1]", "\u{2028}1",
        ]
        for text in refused {
            XCTAssertNotNil(failure(text), "accepted: \(text.debugDescription)")
            XCTAssertNil(JSONValue.parse(Data(text.utf8)), text.debugDescription)
        }
    }

    func testControlCharactersInStringsMustBeEscaped() {
        for byte in UInt8(0)..<0x20 {
            XCTAssertEqual(failure([0x22, 0x61, byte, 0x22]), .invalidString(offset: 2), "byte \(byte)")
        }
        XCTAssertEqual(try parse(#""\u001f\u007f""#), .string("\u{1F}\u{7F}"))
        XCTAssertEqual(try JSONParser.parse([0x22, 0x7F, 0x22]), .string("\u{7F}"))
    }

    func testInvalidUTF8IsRefusedInStringsAndKeys() {
        let invalid: [[UInt8]] = [
            [0xFF], [0xFE], [0x80], [0xBF],                    // never valid / lone continuation
            [0xC0, 0xAF], [0xC1, 0xBF], [0xE0, 0x80, 0xAF],    // overlong
            [0xF0, 0x80, 0x80, 0xAF],                          // overlong
            [0xED, 0xA0, 0x80], [0xED, 0xBF, 0xBF],            // encoded surrogates
            [0xF4, 0x90, 0x80, 0x80], [0xF5, 0x80, 0x80, 0x80], // past U+10FFFF
            [0xE2, 0x82], [0xC3], [0xF0, 0x9F, 0x98],          // truncated
            [0xC3, 0x41],                                       // lead without continuation
        ]
        for bytes in invalid {
            XCTAssertEqual(failure([0x22] + bytes + [0x22]), .invalidUnicode(offset: 1), "string \(bytes)")
            // The same after an escape (the decoding path) and as a key.
            XCTAssertNotNil(failure(Array(#""\n"#.utf8) + bytes + [0x22]), "escaped string \(bytes)")
            XCTAssertNotNil(failure([0x7B, 0x22] + bytes + Array(#"":1}"#.utf8)), "key \(bytes)")
        }
        // A raw lead byte cannot be completed by an escape's bytes.
        XCTAssertNotNil(failure([0x22, 0xC3] + Array(#"\u00a9""#.utf8)))
        let valid: [[UInt8]] = [[0xC2, 0x80], [0xDF, 0xBF], [0xE0, 0xA0, 0x80], [0xED, 0x9F, 0xBF],
                                [0xEE, 0x80, 0x80], [0xF0, 0x90, 0x80, 0x80], [0xF4, 0x8F, 0xBF, 0xBF]]
        for bytes in valid {
            XCTAssertEqual(try JSONParser.parse([0x22] + bytes + [0x22]),
                           .string(String(decoding: bytes, as: UTF8.self)), "\(bytes)")
        }
    }

    /// The hand-written UTF-8 check agrees with the standard library's strict validation on
    /// every 1- and 2-byte sequence and on a deterministic sample of longer ones.
    func testUTF8CheckAgreesWithTheStandardLibrary() {
        func agree(_ bytes: [UInt8]) -> Bool {
            let mine = bytes.withUnsafeBufferPointer { JSONParser.isValidUTF8($0) }
            return mine == (String(validating: bytes, as: UTF8.self) != nil)
        }
        for first in 0...255 {
            XCTAssertTrue(agree([UInt8(first)]), "\(first)")
            for second in 0...255 where !agree([UInt8(first), UInt8(second)]) {
                XCTFail("\(first) \(second)")
            }
        }
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next() -> UInt8 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            // Mostly bytes from 0x80 up, where the rules are.
            let byte = UInt8(truncatingIfNeeded: state >> 33)
            return byte < 0x20 ? byte : byte | 0x80
        }
        for _ in 0..<200_000 {
            let bytes = (0..<(3 + Int(next() % 4))).map { _ in next() }
            if !agree(bytes) { return XCTFail("\(bytes)") }
        }
    }

    func testMalformedJSONWinsOverInvalidUnicode() {
        // Invalid text in a document that is broken elsewhere is a broken document (400), not
        // a field to complain about (422).
        XCTAssertEqual(failure([0x7B, 0x22, 0x61, 0x22, 0x3A, 0x22, 0xFF, 0x22, 0x2C, 0x7D]), .unexpectedByte(offset: 9))
        XCTAssertEqual(failure(#"["\ud834", ]"#), .unexpectedByte(offset: 11))
        XCTAssertEqual(failure(#"{"a":"\ud834","b":[1,2]}"#), .invalidUnicode(offset: 6))
    }

    func testSurrogatePairsCombineAndLoneOnesAreRefused() throws {
        XCTAssertEqual(try parse(#""\uD834\uDD1E""#), .string("𝄞"))
        XCTAssertEqual(try parse(#"{"\ud83d\ude00":1}"#), .object(["😀": .number(1)]))
        XCTAssertEqual(failure(#""\ud834""#), .invalidUnicode(offset: 1))
        XCTAssertEqual(failure(#""a\udd1e""#), .invalidUnicode(offset: 2))
        XCTAssertEqual(failure(#""\ud834\ud834""#), .invalidUnicode(offset: 1))
        XCTAssertEqual(failure(#""\udd1e\ud834""#), .invalidUnicode(offset: 1))
        XCTAssertEqual(failure(#""\ud834\n""#), .invalidUnicode(offset: 1))
    }

    // MARK: - duplicate keys

    func testDuplicateKeysAreRefused() {
        XCTAssertEqual(failure(#"{"email":"a","email":"b"}"#), .duplicateKey(offset: 13))
        XCTAssertEqual(failure(#"{"a":1,"b":2,"a":1}"#), .duplicateKey(offset: 13))
        XCTAssertNotNil(failure(#"[{"x":{"a":1,"a":1}}]"#))
        // Spelled differently, the same key: escaped and raw, precomposed and combining.
        XCTAssertNotNil(failure(#"{"é":1,"\u00e9":2}"#))
        XCTAssertNotNil(failure(#"{"e":1,"\u0065":2}"#))
        XCTAssertNotNil(failure(#"{"\u00e9":1,"e\u0301":2}"#))
        XCTAssertNil(JSONValue.parse(Data(#"{"email":"a","email":"b"}"#.utf8)))
    }

    // MARK: - limits

    func testDepth32IsAcceptedAnd33Refused() throws {
        for (open, close, inner) in [("[", "]", ""), (#"{"a":"#, "}", "1"), (#"[{"a":"#, "}]", "1")] {
            let perLevel = open == #"[{"a":"# ? 2 : 1
            let atLimit = nested(32 / perLevel, open: open, close: close, inner: inner)
            XCTAssertNoThrow(try parse(atLimit), open)
            let past = nested(32 / perLevel, open: open, close: close, inner: perLevel == 2 ? "[1]" : open == "[" ? "[]" : #"{"a":1}"#)
            XCTAssertEqual(failure(past), .tooDeep(offset: 32 * open.utf8.count / perLevel), open)
        }
        XCTAssertEqual(failure(nested(33, open: "[", close: "]")), .tooDeep(offset: 32))
        XCTAssertEqual(failure(nested(33, open: #"{"a":"#, close: "}", inner: "1")), .tooDeep(offset: 160))
        // Depth counts containers only: scalars at depth 32 are fine.
        XCTAssertNoThrow(try parse(nested(32, open: "[", close: "]", inner: #""s",1,true,null"#)))
        // Siblings do not add up.
        let wide = "[" + Array(repeating: nested(31, open: "[", close: "]"), count: 100).joined(separator: ",") + "]"
        XCTAssertNoThrow(try parse(wide))
        // The limit is the caller's.
        XCTAssertEqual(failure("[[1]]", maximumDepth: 1), .tooDeep(offset: 1))
        XCTAssertNoThrow(try parse("[[1]]", maximumDepth: 2))
        XCTAssertNoThrow(try parse("1", maximumDepth: 0))
        XCTAssertEqual(failure("[]", maximumDepth: 0), .tooDeep(offset: 0))
    }

    func testSizeCapIsTheCallers() throws {
        let body = #"{"a":""# + String(repeating: "x", count: 100) + #""}"#
        XCTAssertNoThrow(try parse(body, maximumBytes: body.utf8.count))
        XCTAssertEqual(failure(body, maximumBytes: body.utf8.count - 1), .tooLarge)
        let big = #"[""# + String(repeating: "x", count: 64 * 1024) + #""]"#
        XCTAssertEqual(failure(big), .tooLarge)
        XCTAssertNil(JSONValue.parse(Data(big.utf8)))
        XCTAssertNotNil(JSONValue.parse(Data(big.utf8), maximumBytes: 1 << 20))
    }

    // MARK: - hostile bodies (issue 10): each just under 64 KiB

    private let cap = 64 * 1024 - 16

    func testDeepNestingAtTheMostTheInputAllowsIsRefusedAsTooDeep() {
        let arrays = nested(cap / 2, open: "[", close: "]")
        XCTAssertEqual(failure(arrays), .tooDeep(offset: 32))
        let objects = nested(cap / 6, open: #"{"a":"#, close: "}", inner: "1")
        XCTAssertEqual(failure(objects), .tooDeep(offset: 160))
        let mixed = nested(cap / 8, open: #"[{"a":"#, close: "}]", inner: "1")
        XCTAssertEqual(failure(mixed), .tooDeep(offset: 96))
        // Invalid only at the very end: refused at depth 33 long before.
        let broken = String(repeating: "[", count: cap / 2) + String(repeating: "]", count: cap / 2 - 1) + "}"
        XCTAssertEqual(failure(broken), .tooDeep(offset: 32))
        // Invalid at the very end and within the depth limit: refused there.
        let shallowBroken = "[" + Array(repeating: nested(31, open: "[", close: "]"), count: cap / 64).joined(separator: ",") + "}"
        XCTAssertEqual(failure(shallowBroken), .unexpectedByte(offset: shallowBroken.utf8.count - 1))
        // Many deep-but-legal siblings: accepted.
        let siblings = "[" + Array(repeating: nested(31, open: "[", close: "]"), count: cap / 63).joined(separator: ",") + "]"
        XCTAssertLessThan(siblings.utf8.count, 64 * 1024)
        XCTAssertNotNil(JSONValue.parse(Data(siblings.utf8)))
    }

    func testLongStringsOfEscapesAreDecoded() throws {
        let count = (cap - 10) / 6
        let zeros = #"{"a":""# + String(repeating: #"\u0000"#, count: count) + #""}"#
        XCTAssertEqual(try parse(zeros)["a"], .string(String(repeating: "\u{0}", count: count)))
        let quotes = #"{"a":""# + String(repeating: #"\""#, count: (cap - 10) / 2) + #""}"#
        XCTAssertEqual(try parse(quotes)["a"], .string(String(repeating: "\"", count: (cap - 10) / 2)))
        let pairs = #"[""# + String(repeating: #"\ud83d\ude00"#, count: (cap - 4) / 12) + #""]"#
        XCTAssertEqual(try parse(pairs), .array([.string(String(repeating: "😀", count: (cap - 4) / 12))]))
        // The same ending in a lone surrogate: refused.
        let loneAtEnd = #"[""# + String(repeating: #"\ud83d\ude00"#, count: (cap - 10) / 12) + #"\ud83d"]"#
        XCTAssertNotNil(failure(loneAtEnd))
    }

    func testManyKeysAndManyNumbers() throws {
        var members: [String] = []
        var length = 2
        while length < cap {
            let member = #""k\#(members.count)":\#(members.count)"#
            members.append(member)
            length += member.utf8.count + 1
        }
        members.removeLast()
        XCTAssertGreaterThan(members.count, 5000)
        let many = "{" + members.joined(separator: ",") + "}"
        guard case .object(let object) = try parse(many) else { return XCTFail("not an object") }
        XCTAssertEqual(object.count, members.count)
        XCTAssertEqual(object["k4999"], .number(4999))
        // The same with one key repeated at the very end: refused.
        let repeated = "{" + members.dropLast().joined(separator: ",") + #","k0":1}"#
        XCTAssertEqual(failure(repeated), .duplicateKey(offset: repeated.utf8.count - 7))

        let numbers = (0..<10_000).map { String($0 % 1000) }
        guard case .array(let values) = try parse("[" + numbers.joined(separator: ",") + "]") else {
            return XCTFail("not an array")
        }
        XCTAssertEqual(values.count, 10_000)
        XCTAssertEqual(values[1234], .number(234))
        let floats = "[" + (0..<3000).map { "1.5e\($0 % 300)" }.joined(separator: ",") + "]"
        guard case .array(let parsed) = try parse(floats) else { return XCTFail("not an array") }
        XCTAssertEqual(parsed[2], .number(1.5e2))
        let longNumber = "[" + String(repeating: "7", count: cap) + "]"
        XCTAssertEqual(failure(longNumber), .invalidNumber(offset: 1))
    }

    func testDataAndByteArrayEntryPointsAgree() throws {
        let text = #"{"a":[1,"é",{"b":false}]}"#
        XCTAssertEqual(try JSONParser.parse(Data(text.utf8)), try JSONParser.parse(Array(text.utf8)))
        XCTAssertEqual(failure("[1,]"), .unexpectedByte(offset: 3))
        XCTAssertEqual(failure("[1"), .unexpectedEnd)
        XCTAssertEqual(failure(#"{"a":1"#), .unexpectedEnd)
        XCTAssertEqual(failure(#""abc"#), .unexpectedEnd)
        // A slice of a larger Data (non-zero start index) parses the same.
        let padded = Data(("xx" + text).utf8).dropFirst(2)
        XCTAssertEqual(JSONValue.parse(padded), try parse(text))
    }
}
