import Foundation
import XCTest
@testable import IdentityKit

/// Digests, HMAC and base64url (IdentityKit's public crypto; the sealing and password hashing
/// are IdentityCredentials', tested in IdentityCredentialsTests/CryptoTests.swift).
final class DigestTests: XCTestCase {
    func testSHA256AndHMACKnownAnswers() {
        XCTAssertEqual(Hex.encode(Digest.sha256("abc")),
                       "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        // RFC 4231 test case 2.
        XCTAssertEqual(Hex.encode(Digest.hmacSHA256(key: Array("Jefe".utf8), Array("what do ya want for nothing?".utf8))),
                       "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
    }

    func testConstantTimeEqual() {
        XCTAssertTrue(Digest.constantTimeEqual([1, 2, 3], [1, 2, 3]))
        XCTAssertFalse(Digest.constantTimeEqual([1, 2, 3], [1, 2, 4]))
        XCTAssertFalse(Digest.constantTimeEqual([1, 2, 3], [1, 2]))
    }

    func testBase64URLRoundTripWithoutPadding() {
        for length in 0..<40 {
            let bytes = SecureRandom.bytes(length)
            let text = Base64URL.encode(bytes)
            XCTAssertFalse(text.contains("=") || text.contains("+") || text.contains("/"))
            XCTAssertEqual(Base64URL.decode(text), bytes)
        }
        XCTAssertNil(Base64URL.decode("ab+c"))
    }
}

final class ProviderKeyTests: XCTestCase {
    func testRSAPublicKeyRebuiltFromJWKComponentsVerifiesTheSigner() throws {
        let key = try RSAKey.generate()
        let (n, e) = try key.publicComponents()
        let rebuilt = try RSAKey.fromComponents(modulus: n, exponent: e)
        let signature = try key.signRS256(Array("hello".utf8))
        XCTAssertTrue(rebuilt.verifyRS256(Array("hello".utf8), signature: signature))
        XCTAssertFalse(rebuilt.verifyRS256(Array("hellO".utf8), signature: signature))
    }
}
