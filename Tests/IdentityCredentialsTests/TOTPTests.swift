import XCTest
@testable import IdentityCredentials
@testable import IdentityKit

final class TOTPTests: XCTestCase {
    /// RFC 6238, appendix B: SHA-1 with the 20-byte ASCII secret "12345678901234567890", 8 digits.
    func testRFC6238TestVectors() {
        let secret = Array("12345678901234567890".utf8)
        let vectors: [(Int64, String)] = [
            (59, "94287082"), (1_111_111_109, "07081804"), (1_111_111_111, "14050471"),
            (1_234_567_890, "89005924"), (2_000_000_000, "69279037"), (20_000_000_000, "65353130"),
        ]
        for (time, expected) in vectors {
            XCTAssertEqual(TOTP.code(secret: secret, step: TOTP.step(at: time), digits: 8), expected, "T = \(time)")
        }
        // Six digits are the last six of the same number.
        XCTAssertEqual(TOTP.code(secret: secret, step: TOTP.step(at: 59)), "287082")
    }

    func testOneStepEitherSideIsAcceptedTwoAreNot() {
        let secret = SecureRandom.bytes(20)
        let now: Int64 = 1_800_000_015
        let step = TOTP.step(at: now)
        for offset in Int64(-1)...1 {
            XCTAssertEqual(TOTP.matchingStep(TOTP.code(secret: secret, step: step + offset), secret: secret, now: now),
                           step + offset)
        }
        for offset: Int64 in [-2, 2] {
            let code = TOTP.code(secret: secret, step: step + offset)
            let nearby = (-1...1).map { TOTP.code(secret: secret, step: step + Int64($0)) }
            if !nearby.contains(code) { XCTAssertNil(TOTP.matchingStep(code, secret: secret, now: now)) }
        }
        XCTAssertNil(TOTP.matchingStep("12345", secret: secret, now: now))
        XCTAssertNil(TOTP.matchingStep("12345a", secret: secret, now: now))
    }

    func testBase32AndOtpauthURI() {
        // RFC 4648, section 10 (without padding).
        XCTAssertEqual(Base32.encode(Array("foobar".utf8)), "MZXW6YTBOI")
        XCTAssertEqual(Base32.encode(Array("f".utf8)), "MY")
        let uri = TOTP.uri(secret: Array("12345678901234567890".utf8), issuer: "My App", account: "ada@example.com")
        XCTAssertEqual(uri, "otpauth://totp/My%20App:ada@example.com?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"
                       + "&issuer=My%20App&algorithm=SHA1&digits=6&period=30")
    }

    func testTOTPSecretSealIsBoundToItsUser() throws {
        let seal = TOTPSecretSeal(masterKey: SecureRandom.bytes(32))
        let secret = SecureRandom.bytes(20)
        let sealed = try seal.seal(secret, appId: "app_1", uid: "u1")
        XCTAssertEqual(try seal.open(sealed, appId: "app_1", uid: "u1"), secret)
        XCTAssertThrowsError(try seal.open(sealed, appId: "app_1", uid: "u2"))
        XCTAssertThrowsError(try TOTPSecretSeal(masterKey: SecureRandom.bytes(32)).open(sealed, appId: "app_1", uid: "u1"))
    }
}
