import XCTest
@testable import IdentityCredentials
@testable import IdentityKit

/// Imported password hashes checked against published vectors: each must accept its password
/// and refuse a neighbour, through the stored form the users table keeps.
final class ImportedPasswordHashTests: XCTestCase {
    private func assertStoredCheck(_ stored: String, accepts password: String, file: StaticString = #filePath,
                                   line: UInt = #line) throws {
        let hash = try XCTUnwrap(ImportedPasswordHash(stored: stored), "unreadable: \(stored)", file: file, line: line)
        XCTAssertNoThrow(try hash.validate(), file: file, line: line)
        XCTAssertEqual(hash.storedForm, stored, file: file, line: line)
        XCTAssertTrue(hash.verify(password), "refused its password: \(stored)", file: file, line: line)
        XCTAssertFalse(hash.verify(password + "x"), file: file, line: line)
        XCTAssertFalse(hash.verify(""), file: file, line: line)
    }

    /// Openwall / OpenBSD vectors (crypt_blowfish's tests) and one of pyca/bcrypt's for $2b$.
    func testBcryptVectors() throws {
        try assertStoredCheck("$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW", accepts: "U*U")
        try assertStoredCheck("$2a$05$CCCCCCCCCCCCCCCCCCCCC.VGOzA784oUp/Z0DY336zx7pLYAy0lwK", accepts: "U*U*")
        try assertStoredCheck("$2y$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW", accepts: "U*U")
        try assertStoredCheck("$2b$04$VvlCUKbTMjaxaYJ.k5juoecpG/7IzcH1AkmqKi.lIZMVIOLClWAk.", accepts: "J8eHUDuxBB520")
        XCTAssertNil(ImportedPasswordHash(stored: "$2b$04$short"))
        XCTAssertThrowsError(try ImportedPasswordHash.bcrypt("$2b$31$VvlCUKbTMjaxaYJ.k5juoecpG/7IzcH1AkmqKi.lIZMVIOLClWAk.").validate())
    }

    /// RFC 7914 §12: scrypt("password", "NaCl", N=1024, r=8, p=16, 64 bytes).
    func testScryptRFC7914Vector() throws {
        let expected = "fdbabe1c9d3472007856e7190d01e9fe7c6ad7cbc8237830e77376634b3731622eaf30d92e22a3886ff109279d9830dac727afb94a83ee6d8360cbdfa2cc0640"
        let derived = try KeyDerivation.scrypt(password: Array("password".utf8), salt: Array("NaCl".utf8), n: 1024, r: 8, p: 16, length: 64)
        XCTAssertEqual(Hex.encode(derived), expected)
        let stored = ImportedPasswordHash.scrypt(logN: 10, r: 8, p: 16, salt: Array("NaCl".utf8),
                                                 hash: try XCTUnwrap(Hex.decode(expected))).storedForm
        try assertStoredCheck(stored, accepts: "password")
    }

    /// Firebase's published vector (github.com/firebase/scrypt README).
    func testFirebaseScryptPublishedVector() throws {
        let signerKey = try XCTUnwrap(ImportedPasswordHash.unb64("jxspr8Ki0RYycVU8zykbdLGjFQ3McFUH0uiiTvC8pVMXAn210wjLNmdZJzxUECKbm0QsEmYUSDzZvpjeJ9WmXA=="))
        let hash = ImportedPasswordHash.firebaseScrypt(
            memoryCost: 14, rounds: 8, salt: try XCTUnwrap(ImportedPasswordHash.unb64("42xEC+ixf3L2lw==")),
            saltSeparator: try XCTUnwrap(ImportedPasswordHash.unb64("Bw==")), signerKey: signerKey,
            hash: try XCTUnwrap(ImportedPasswordHash.unb64("lSrfV15cpx95/sZS2W9c9Kp6i/LVgQNDNC/qzrCnh1SAyZvqmZqAjTdn3aoItz+VHjoZilo78198JAdRuid5lQ==")))
        try assertStoredCheck(hash.storedForm, accepts: "user1password")
    }

    /// RFC 6070 (PBKDF2-HMAC-SHA1) and the SHA-256 vectors commonly paired with it.
    func testPBKDF2Vectors() throws {
        let salt = Array("salt".utf8)
        let sha1 = ImportedPasswordHash.pbkdf2(digest: .sha1, iterations: 4096, salt: salt,
                                               hash: try XCTUnwrap(Hex.decode("4b007901b765489abead49d926f721d065a429c1")))
        try assertStoredCheck(sha1.storedForm, accepts: "password")
        let sha256 = ImportedPasswordHash.pbkdf2(digest: .sha256, iterations: 4096, salt: salt,
                                                 hash: try XCTUnwrap(Hex.decode("c5e478d59288c841aa530db6845c4c8d962893a001ce4e11a4963873aa98134a")))
        try assertStoredCheck(sha256.storedForm, accepts: "password")
        XCTAssertEqual(Hex.encode(try KeyDerivation.pbkdf2(password: Array("password".utf8), salt: salt, iterations: 1,
                                                           digest: .sha1, length: 20)),
                       "0c60c80f961f0e71f3a9b524af6012062fe037a6")
    }

    /// The reference implementation's PHC vectors (argon2 src/test.c; libxcrypt's test-crypt-argon2).
    func testArgon2Vectors() throws {
        try assertStoredCheck("$argon2i$v=19$m=256,t=2,p=1$c29tZXNhbHQ$iekCn0Y3spW+sCcFanM2xBT63UP2sghkUoHLIUpWRS8", accepts: "password")
        try assertStoredCheck("$argon2i$v=19$m=256,t=2,p=2$c29tZXNhbHQ$T/XOJ2mh1/TIpJHfCdQan76Q5esCFVoT5MAeIM1Oq2E", accepts: "password")
        try assertStoredCheck("$argon2id$v=19$m=256,t=2,p=1$c29tZXNhbHQ$nf65EOgLrQMR/uIPnA4rEsF5h7TKyQwu9U1bMCHGi/4", accepts: "password")
        XCTAssertThrowsError(try ImportedPasswordHash.argon2("$argon2id$v=19$m=4194304,t=2,p=1$c29tZXNhbHQ$nf65EOgLrQMR/uIPnA4rEsF5h7TKyQwu9U1bMCHGi/4").validate())
        XCTAssertThrowsError(try ImportedPasswordHash.argon2("$argon2id$v=19$m=131072,t=16,p=1$c29tZXNhbHQ$nf65EOgLrQMR/uIPnA4rEsF5h7TKyQwu9U1bMCHGi/4").validate())
        XCTAssertThrowsError(try ImportedPasswordHash.bcrypt("$2b$15$VvlCUKbTMjaxaYJ.k5juoecpG/7IzcH1AkmqKi.lIZMVIOLClWAk.").validate())
    }

    /// The service's hasher checks every stored kind and asks for a re-hash of all but its own.
    func testStoredCheckThroughPasswordHasher() throws {
        let hasher = try PasswordHasher(cost: .init(memoryKiB: 1024, iterations: 1, parallelism: 1))
        let own = try hasher.hash("correct horse")
        XCTAssertTrue(hasher.verifyStored("correct horse", against: own))
        XCTAssertFalse(hasher.needsRehash(own))
        let bcrypt = "$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW"
        XCTAssertTrue(hasher.verifyStored("U*U", against: bcrypt))
        XCTAssertTrue(hasher.needsRehash(bcrypt))
        XCTAssertFalse(hasher.verifyStored("U*U", against: "$unknown$U*U"))
        XCTAssertTrue(hasher.needsRehash("$argon2id$v=19$m=256,t=2,p=1$c29tZXNhbHQ$nf65EOgLrQMR/uIPnA4rEsF5h7TKyQwu9U1bMCHGi/4"))
    }
}
