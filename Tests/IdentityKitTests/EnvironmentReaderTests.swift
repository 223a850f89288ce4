import Foundation
import XCTest
@testable import IdentityKit

final class EnvironmentReaderTests: XCTestCase {
    private let randomKey = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"

    private func key(_ hex: String) -> (key: [UInt8]?, problems: [String]) {
        var env = EnvironmentReader(["IDENTITY_MASTER_KEY": hex])
        let key = env.key32("IDENTITY_MASTER_KEY", required: true)
        return (key, env.problems)
    }

    func testARandomKeyIsAccepted() {
        let read = key(randomKey)
        XCTAssertEqual(read.key, Hex.decode(randomKey))
        XCTAssertEqual(read.problems, [])
    }

    func testKeysOfOneByteAreRefused() {
        for byte in ["00", "01", "ff", "aa"] {
            let read = key(String(repeating: byte, count: 32))
            XCTAssertNil(read.key, byte)
            XCTAssertEqual(read.problems.count, 1, byte)
            XCTAssertTrue(read.problems[0].contains("IDENTITY_MASTER_KEY is not a random key"), read.problems[0])
            XCTAssertTrue(read.problems[0].contains("openssl rand -hex 32"), read.problems[0])
        }
    }

    func testShortPatternsAndCountingSequencesAreRefused() {
        let counting = (0..<32).map { String(format: "%02x", $0) }.joined()
        let downward = (0..<32).map { String(format: "%02x", 255 - $0 * 3) }.joined()
        let repeated = String(repeating: "deadbeef", count: 8)
        let fifteenDistinct = String(repeating: "0102030405060708090a0b0c0d0e0f", count: 3).prefix(64)
        for hex in [counting, downward, repeated, String(fifteenDistinct)] {
            XCTAssertNil(key(hex).key, hex)
        }
    }

    func testAWeakSubKeyIsRefusedLikeTheMasterKey() {
        var env = EnvironmentReader(["IDENTITY_MAIL_PAYLOAD_KEY": String(repeating: "0", count: 64)])
        XCTAssertNil(env.key32("IDENTITY_MAIL_PAYLOAD_KEY", required: false))
        XCTAssertEqual(env.problems.count, 1)
    }

    func testSecretsAreReadFromTheFileNamedByTheirFileVariable() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString)
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let urlFile = dir.appendingPathComponent("database-url").path
        try "postgresql://gateway:s3cret@db:5432/identity\n".write(toFile: urlFile, atomically: true, encoding: .utf8)
        let amqpFile = dir.appendingPathComponent("amqp-url").path
        try "amqp://gateway:s3cret@mq:5672/%2F".write(toFile: amqpFile, atomically: true, encoding: .utf8)
        let keyFile = dir.appendingPathComponent("master-key").path
        try (randomKey + "\n").write(toFile: keyFile, atomically: true, encoding: .utf8)

        var env = EnvironmentReader(["IDENTITY_DATABASE_URL_FILE": urlFile, "IDENTITY_AMQP_URL_FILE": amqpFile,
                                     "IDENTITY_MASTER_KEY_FILE": keyFile])
        let common = CommonConfiguration(reading: &env, defaultPoolSize: 1)
        XCTAssertEqual(common.databaseURL, "postgresql://gateway:s3cret@db:5432/identity")
        XCTAssertEqual(common.amqpURL, "amqp://gateway:s3cret@mq:5672/%2F")
        XCTAssertEqual(env.key32("IDENTITY_MASTER_KEY", required: true), Hex.decode(randomKey))
        XCTAssertEqual(env.problems, [])
    }

    /// No built-in address to fall back on: a process without its store's or broker's URL does
    /// not start (it would log in as the broker's `guest` or a role trusted without a password).
    func testTheStoreAndBrokerURLsAreRequired() {
        var env = EnvironmentReader([:])
        let common = CommonConfiguration(reading: &env, defaultPoolSize: 1)
        XCTAssertEqual(common.amqpURL, "")
        XCTAssertEqual(env.problems.count, 2, "\(env.problems)")
        XCTAssertTrue(env.problems[0].hasPrefix("IDENTITY_DATABASE_URL (or IDENTITY_DATABASE_URL_FILE) is required"))
        XCTAssertTrue(env.problems[1].hasPrefix("IDENTITY_AMQP_URL (or IDENTITY_AMQP_URL_FILE) is required"))
        XCTAssertFalse(env.problems.joined().contains("guest:guest"))
        // identityctl's commands that need no bus run without the broker's URL.
        var tool = EnvironmentReader(["IDENTITY_DATABASE_URL": "postgresql://identityctl:s3cret@db:5432/identity"])
        XCTAssertEqual(CommonConfiguration(reading: &tool, defaultPoolSize: 1, needsBroker: false).amqpURL, "")
        XCTAssertEqual(tool.problems, [])
    }

    func testAVariableAndItsFileBothSetAreRefusedWhateverTheyHold() throws {
        let keyFile = try write("master-key", randomKey)
        let urlFile = try write("database-url", "postgresql://gateway:s3cret@db:5432/identity")
        var env = EnvironmentReader(["IDENTITY_DATABASE_URL": "postgresql://gateway:s3cret@db:5432/identity",
                                     "IDENTITY_DATABASE_URL_FILE": urlFile, "IDENTITY_AMQP_URL": "amqp://gateway:s3cret@mq:5672/%2F",
                                     "IDENTITY_MASTER_KEY": randomKey, "IDENTITY_MASTER_KEY_FILE": keyFile])
        _ = CommonConfiguration(reading: &env, defaultPoolSize: 1)
        XCTAssertNil(env.key32("IDENTITY_MASTER_KEY", required: true))
        XCTAssertEqual(env.problems, [
            "IDENTITY_DATABASE_URL and IDENTITY_DATABASE_URL_FILE are both set: set only one "
                + "(the file keeps the secret out of the environment)",
            "IDENTITY_MASTER_KEY and IDENTITY_MASTER_KEY_FILE are both set: set only one "
                + "(the file keeps the secret out of the environment)",
        ])
    }

    func testAFileThatCannotBeReadIsRefusedWithTheReason() throws {
        let directory = try write("a-directory", nil)
        let notText = try write("not-text", nil, bytes: [0xff, 0xfe, 0x00, 0x80])
        var env = EnvironmentReader(["IDENTITY_MASTER_KEY_FILE": "/nonexistent/master-key",
                                     "IDENTITY_AMQP_URL_FILE": directory,
                                     "IDENTITY_SMTP_PASSWORD_FILE": notText])
        XCTAssertNil(env.key32("IDENTITY_MASTER_KEY", required: true))
        XCTAssertNil(env.secret("IDENTITY_AMQP_URL"))
        XCTAssertNil(env.secret("IDENTITY_SMTP_PASSWORD"))
        XCTAssertEqual(env.problems, [
            "IDENTITY_MASTER_KEY_FILE=/nonexistent/master-key cannot be read (No such file or directory)",
            "IDENTITY_AMQP_URL_FILE=\(directory) cannot be read (a directory, not a file)",
            "IDENTITY_SMTP_PASSWORD_FILE=\(notText) cannot be read (not UTF-8 text)",
        ], "one problem each: a required key whose file failed is not also reported missing")
    }

    func testAnEmptyOrBlankFileIsRefusedAndNeverFallsBackToTheDefault() throws {
        let empty = try write("empty", "")
        let blank = try write("blank", " \n\n")
        var env = EnvironmentReader(["IDENTITY_DATABASE_URL_FILE": empty, "IDENTITY_WEBHOOK_SECRET_KEY_FILE": blank])
        XCTAssertNil(env.secret("IDENTITY_DATABASE_URL"))
        XCTAssertNil(env.key32("IDENTITY_WEBHOOK_SECRET_KEY", required: true))
        XCTAssertEqual(env.problems, ["IDENTITY_DATABASE_URL_FILE=\(empty) is empty",
                                      "IDENTITY_WEBHOOK_SECRET_KEY_FILE=\(blank) is empty"])
    }

    // A file (or, with `text` nil and no bytes, a directory) in a folder removed after the test.
    private func write(_ name: String, _ text: String?, bytes: [UInt8]? = nil) throws -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("env-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent(name).path
        if let text {
            try text.write(toFile: path, atomically: true, encoding: .utf8)
        } else if let bytes {
            try Data(bytes).write(to: URL(fileURLWithPath: path))
        } else {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        }
        return path
    }
}
