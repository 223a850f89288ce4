import XCTest
@testable import IdentityKit

final class RulesTests: XCTestCase {
    func testULIDsAreLowerCaseCrockfordAndSortByTime() {
        let early = Identifiers.ulid(milliseconds: 1_700_000_000_000, random: [UInt8](repeating: 0xff, count: 10))
        let late = Identifiers.ulid(milliseconds: 1_700_000_000_001, random: [UInt8](repeating: 0, count: 10))
        XCTAssertEqual(early.count, 26)
        XCTAssertLessThan(early, late)
        XCTAssertTrue(Identifiers.nowULID().allSatisfy { "0123456789abcdefghjkmnpqrstvwxyz".contains($0) })
        XCTAssertTrue(Identifiers.prefixed("ses").hasPrefix("ses_"))
        XCTAssertEqual(Identifiers.secret("rt").count, 3 + 43)
    }

    func testPasswordPolicy() {
        XCTAssertNotNil(PasswordPolicy.problem(with: "short"))
        XCTAssertNotNil(PasswordPolicy.problem(with: String(repeating: "a", count: 257)))
        XCTAssertNotNil(PasswordPolicy.problem(with: "Password123"))
        XCTAssertNil(PasswordPolicy.problem(with: "tolerable-secret"))
        XCTAssertNil(PasswordPolicy.problem(with: String(repeating: "x", count: 256)))
        // Lengths count Unicode scalars, as the OpenAPI document's minLength/maxLength do:
        // "e" + U+0301 is one grapheme but two characters there (found by fuzzing the document).
        XCTAssertNil(PasswordPolicy.problem(with: String(repeating: "e\u{301}", count: 4) + "!"))
        XCTAssertNotNil(PasswordPolicy.problem(with: String(repeating: "e\u{301}", count: 129)))
    }

    /// ASVS 2.1.7: the 10,000 most common breached passwords the length rule lets through are
    /// refused, deep ones too (rank 5,000 of that list), in any case; a random one is not.
    func testBreachedPasswordsAreRefusedDeepIntoTheList() {
        XCTAssertGreaterThanOrEqual(PasswordPolicy.commonPasswords.count, 10_000)
        let lines = PasswordPolicy.breachedPasswordLines.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines[4999], "swetlana", "rank 5,000 (tools/breachgen.py)")
        for common in ["password", "swetlana", "Swetlana", "SWETLANA", "felicidade", "michelle", lines[9999]] {
            XCTAssertEqual(PasswordPolicy.problem(with: common), "is too common", common)
        }
        for _ in 0..<20 {
            let strong = Base64URL.encode(SecureRandom.bytes(12))
            XCTAssertNil(PasswordPolicy.problem(with: strong), strong)
        }
        XCTAssertNil(PasswordPolicy.problem(with: "swetlana and felicidade"))
    }

    func testEmailAddress() {
        for good in ["jane@example.com", "a.b+c@sub.example.co"] { XCTAssertTrue(EmailAddress.isValid(good), good) }
        for bad in ["not-an-email", "a@b", "a b@c.com", "@example.com", "a@@b.com", "a@.com", "a@b.c"] {
            XCTAssertFalse(EmailAddress.isValid(bad), bad)
        }
    }

    func testTimestampsHaveMicroseconds() {
        XCTAssertEqual(Timestamp.rfc3339(microsecondsSinceEpoch: 1_790_000_100_123_456), "2026-09-21T14:15:00.123456Z")
    }

    func testJSONValueWritesNullsAndEscapes() {
        let value: JSONValue = .object(["b": .null, "a": .string("x\"<\n"), "n": .number(3), "t": .bool(true)])
        XCTAssertEqual(value.serialized, #"{"a":"x\"\u003c\n","b":null,"n":3,"t":true}"#)
        XCTAssertEqual(JSONValue.parse(Data(#"{"a":[1,true,null,"s"]}"#.utf8)),
                       .object(["a": .array([.number(1), .bool(true), .null, .string("s")])]))
        XCTAssertNil(JSONValue.parse(Data("{nope".utf8)))
    }

    func testProtoMessagesUseFieldNamesAndAcceptCamelCase() throws {
        let command = TokenV1.SignUp(appId: "app_1", email: "a@b.co", password: "pw", firstName: "Jane",
                                     client: CommonV1.ClientInfo(ip: "127.0.0.1", userAgent: "ua"))
        let json = String(decoding: try ProtoJSON.encode(command), as: UTF8.self)
        XCTAssertTrue(json.contains(#""app_id":"app_1""#))
        XCTAssertTrue(json.contains(#""user_agent":"ua""#))
        XCTAssertFalse(json.contains("last_name"), "unset optional fields are left out")
        XCTAssertEqual(try ProtoJSON.decode(TokenV1.SignUp.self, from: Data(json.utf8)), command)
        let camel = try ProtoJSON.decode(TokenV1.SignUp.self, from: Data(#"{"appId":"app_2","firstName":"J"}"#.utf8))
        XCTAssertEqual(camel.appId, "app_2")
        XCTAssertEqual(camel.firstName, "J")
    }
}

final class EnvironmentKeyTests: XCTestCase {
    func testTheMasterKeyMayComeFromAFile() throws {
        let hex = Hex.encode(SecureRandom.bytes(32))
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("mk-\(Identifiers.nowULID())").path
        try (hex + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        var fromFile = EnvironmentReader(["IDENTITY_MASTER_KEY_FILE": path])
        XCTAssertEqual(fromFile.key32("IDENTITY_MASTER_KEY", required: true).map(Hex.encode), hex)
        XCTAssertEqual(fromFile.problems, [])
        var missing = EnvironmentReader(["IDENTITY_MASTER_KEY_FILE": path + ".nope"])
        XCTAssertNil(missing.key32("IDENTITY_MASTER_KEY", required: true))
        XCTAssertEqual(missing.problems.count, 1)
        var direct = EnvironmentReader(["IDENTITY_MASTER_KEY": hex])
        XCTAssertEqual(direct.key32("IDENTITY_MASTER_KEY", required: true).map(Hex.encode), hex)
        XCTAssertEqual(direct.problems, [])
    }
}
