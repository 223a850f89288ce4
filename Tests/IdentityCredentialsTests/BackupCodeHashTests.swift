import XCTest
@testable import IdentityCredentials
@testable import IdentityKit

/// How backup codes are stored (ASVS 2.6.2): a random salt per code beside the keyed hash.
final class BackupCodeHashTests: XCTestCase {
    let key = Digest.sha256("backup-code sub-key")

    func testEachCodeHasItsOwnSaltAndVerifiesAsTyped() {
        let a = BackupCodeHash.make("abcde-fghjk", key: key)
        let b = BackupCodeHash.make("abcde-fghjk", key: key)
        XCTAssertEqual(a.salt?.count, BackupCodeHash.saltLength)
        XCTAssertGreaterThanOrEqual(BackupCodeHash.saltLength * 8, 32, "ASVS 2.6.2 asks for at least 32 bits")
        XCTAssertNotEqual(a.salt, b.salt, "salts are random")
        XCTAssertNotEqual(a.hmac, b.hmac, "the same code is stored differently each time")
        // Case, spaces and dashes do not matter; another code or another key does not match.
        for typed in ["abcde-fghjk", "ABCDEFGHJK", " abcde fghjk", "abcdefghjk"] {
            XCTAssertTrue(a.matches(typed, key: key), typed)
        }
        XCTAssertFalse(a.matches("abcde-fghjm", key: key))
        XCTAssertFalse(a.matches("abcde-fghjk", key: Digest.sha256("another key")))
        // The salt is in the hash: the bare (unsalted) HMAC of the code is not what is kept.
        XCTAssertNotEqual(a.hmac, Digest.hmacSHA256(key: key, Array("abcdefghjk".utf8)))
        XCTAssertFalse(BackupCodeHash(salt: b.salt, hmac: a.hmac).matches("abcde-fghjk", key: key))
    }

    /// Codes stored before salts (an HMAC of the normalised code, no salt) still verify.
    func testACodeStoredWithoutASaltStillVerifies() {
        let legacy = BackupCodeHash(salt: nil, hmac: Digest.hmacSHA256(key: key, Array("abcdefghjk".utf8)))
        XCTAssertTrue(legacy.matches("ABCDE-FGHJK", key: key))
        XCTAssertFalse(legacy.matches("abcde-fghjm", key: key))
    }
}
