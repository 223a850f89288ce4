import XCTest
@testable import IdentityKit

/// Access tokens under each algorithm: signed by the private key, verified by the public key
/// read back from PEM (as the gateway reads it), refused under any other key or algorithm.
final class TokenSigningKeyTests: XCTestCase {
    private let issuer = "https://id.example/v1/apps/app_1"

    private func claims() -> AccessTokenClaims {
        let now = Timestamp.nowSeconds()
        return AccessTokenClaims(iss: issuer, aud: "app_1", sub: "uid1", sid: "ses_1", iat: now, exp: now + 600, jti: "j1",
                                 amr: ["pwd"], isGuest: false, email: nil, emailVerified: false, roles: [])
    }

    func testEachAlgorithmSignsAndVerifiesThroughPEM() throws {
        for algorithm in SigningAlgorithm.allCases {
            let key = try TokenSigningKey.generate(algorithm)
            let token = try JWT.sign(claims(), kid: "k1", key: key)
            let header = try XCTUnwrap(JSONValue.parse(Data(try XCTUnwrap(Base64URL.decode(String(token.split(separator: ".")[0]))))))
            XCTAssertEqual(header["alg"], .string(algorithm.rawValue))
            let publicKey = try TokenSigningKey.fromPEM(key.publicKeyPEM(), algorithm: algorithm)
            XCTAssertFalse(publicKey.isPrivate)
            XCTAssertEqual(try JWT.verify(token, issuer: issuer, audience: "app_1", now: Timestamp.nowSeconds()) { _ in publicKey }.sub, "uid1")
            // Another key of the same algorithm: bad signature.
            let other = try TokenSigningKey.fromPEM(TokenSigningKey.generate(algorithm).publicKeyPEM(), algorithm: algorithm)
            XCTAssertThrowsError(try JWT.verify(token, issuer: issuer, audience: "app_1", now: Timestamp.nowSeconds()) { _ in other }) {
                XCTAssertEqual($0 as? JWT.VerificationFailure, .badSignature, algorithm.rawValue)
            }
            // A key of another algorithm under the same kid: refused before any signature check.
            let wrongAlgorithm = try TokenSigningKey.generate(algorithm == .rs256 ? .es256 : .rs256)
            XCTAssertThrowsError(try JWT.verify(token, issuer: issuer, audience: "app_1", now: Timestamp.nowSeconds()) { _ in wrongAlgorithm }) {
                XCTAssertEqual($0 as? JWT.VerificationFailure, .unsupportedAlgorithm, algorithm.rawValue)
            }
            // A PEM read as the wrong algorithm is refused, not reinterpreted.
            XCTAssertThrowsError(try TokenSigningKey.fromPEM(key.publicKeyPEM(), algorithm: algorithm == .edDSA ? .es256 : .edDSA))
        }
    }

    func testJWKShapes() throws {
        let rsa = try TokenSigningKey.generate(.rs256).publicJWK(kid: "r")
        XCTAssertEqual(rsa["kty"], .string("RSA"))
        XCTAssertNil(rsa["d"])
        let ec = try TokenSigningKey.generate(.es256).publicJWK(kid: "e")
        XCTAssertEqual(ec["kty"], .string("EC"))
        XCTAssertEqual(ec["crv"], .string("P-256"))
        for coordinate in ["x", "y"] {
            guard case .string(let value)? = ec[coordinate] else { return XCTFail("no \(coordinate)") }
            XCTAssertEqual(Base64URL.decode(value)?.count, 32)
        }
        let ed = try TokenSigningKey.generate(.edDSA).publicJWK(kid: "o")
        XCTAssertEqual(ed["kty"], .string("OKP"))
        XCTAssertEqual(ed["crv"], .string("Ed25519"))
        XCTAssertEqual(ed["alg"], .string("EdDSA"))
        guard case .string(let x)? = ed["x"] else { return XCTFail("no x") }
        XCTAssertEqual(Base64URL.decode(x)?.count, 32)
        XCTAssertNil(ed["d"])
    }

    /// ES256 signatures are the fixed 64-byte r ‖ s; a DER signature (what OpenSSL makes) is refused.
    func testES256SignatureForm() throws {
        let key = try TokenSigningKey.generate(.es256)
        let signature = try key.sign(Array("message".utf8))
        XCTAssertEqual(signature.count, 64)
        XCTAssertTrue(key.verify(Array("message".utf8), signature: signature))
        XCTAssertFalse(key.verify(Array("messagf".utf8), signature: signature))
        XCTAssertFalse(key.verify(Array("message".utf8), signature: Array(signature.prefix(63))))
    }
}
