import IdentityKit
import XCTest
@testable import WebAuthn

/// The relying-party checks against credentials made by the e2e suite's software authenticator
/// (Tests/e2e/webauthn_authenticator.py, itself cross-checked with py_webauthn): one packed
/// self-attested registration and one assertion per algorithm, all for rp id `example.com`,
/// origin `https://example.com`, challenge 00 01 … 1f.
final class RelyingPartyTests: XCTestCase {
    struct Vector {
        let credentialId: String
        let registrationClientData: String
        let attestationObject: String
        let assertionClientData: String
        let authenticatorData: String
        let signature: String
    }

    static let vectors: [String: Vector] = [
        "ES256": Vector(
            credentialId: "fixHJF60MxYvEq9Zc44sv03nzICXNJIGRQTlEOUkSws",
            registrationClientData: "eyJ0eXBlIjoid2ViYXV0aG4uY3JlYXRlIiwiY2hhbGxlbmdlIjoiQUFFQ0F3UUZCZ2NJQ1FvTERBME9EeEFSRWhNVUZSWVhHQmthR3h3ZEhoOCIsIm9yaWdpbiI6Imh0dHBzOi8vZXhhbXBsZS5jb20iLCJjcm9zc09yaWdpbiI6ZmFsc2V9",
            attestationObject: "o2NmbXRmcGFja2VkZ2F0dFN0bXSiY2FsZyZjc2lnWEcwRQIgUuMB7g3c68KrvJwTxyuqNUBtindKw1wKiuhmWE8K37MCIQC1EIXMu4kWw85YLfTfVPQo_pLnCECPmOOQ-XMbUqOLiGhhdXRoRGF0YViko3mm9u6vuaVeN4wRgDTidR5oL6ufLTCrE9ISVYbOGUddAAAAAAAAAAAAAAAAAAAAAAAAAAAAIH4sRyRetDMWLxKvWXOOLL9N58yAlzSSBkUE5RDlJEsLpQECAyYgASFYIBOjI3e_qBy0m4RL33AKf3-Do1UEJqCpOJqz9IHH-h_7Ilgg9DsCQh0wN3MTXYccckB17WY0HLGhp_4smab0kYOpTwA",
            assertionClientData: "eyJ0eXBlIjoid2ViYXV0aG4uZ2V0IiwiY2hhbGxlbmdlIjoiQUFFQ0F3UUZCZ2NJQ1FvTERBME9EeEFSRWhNVUZSWVhHQmthR3h3ZEhoOCIsIm9yaWdpbiI6Imh0dHBzOi8vZXhhbXBsZS5jb20iLCJjcm9zc09yaWdpbiI6ZmFsc2V9",
            authenticatorData: "o3mm9u6vuaVeN4wRgDTidR5oL6ufLTCrE9ISVYbOGUcdAAAAAQ",
            signature: "MEYCIQCrO5yBqRwhzh5pNqXgEeVznOy4LRPrOexdW3DiAezyMwIhAM3d9suD2MTs5EKsmNzHmf9KkeXbcJKbfJgjKtFCGn2n"),
        "EdDSA": Vector(
            credentialId: "gNKggNkbPvcsdRahIMtqCXiTg2vJeuwW3CFbGqj0uQg",
            registrationClientData: "eyJ0eXBlIjoid2ViYXV0aG4uY3JlYXRlIiwiY2hhbGxlbmdlIjoiQUFFQ0F3UUZCZ2NJQ1FvTERBME9EeEFSRWhNVUZSWVhHQmthR3h3ZEhoOCIsIm9yaWdpbiI6Imh0dHBzOi8vZXhhbXBsZS5jb20iLCJjcm9zc09yaWdpbiI6ZmFsc2V9",
            attestationObject: "o2NmbXRmcGFja2VkZ2F0dFN0bXSiY2FsZydjc2lnWEAU9FO020PuWINPcp9nDXcoEDTOIXCMkZ6NFdf7yBqBH1FFVL1iW5MbT1WGgGYKRaPIgMyFn3KdUx_5FR1fRKUMaGF1dGhEYXRhWIGjeab27q-5pV43jBGANOJ1Hmgvq58tMKsT0hJVhs4ZR10AAAAAAAAAAAAAAAAAAAAAAAAAAAAggNKggNkbPvcsdRahIMtqCXiTg2vJeuwW3CFbGqj0uQikAQEDJyAGIVggHb5OeTykhqcLwN0HUF1fUMkkiH2m8tiqId9uotUCSB0",
            assertionClientData: "eyJ0eXBlIjoid2ViYXV0aG4uZ2V0IiwiY2hhbGxlbmdlIjoiQUFFQ0F3UUZCZ2NJQ1FvTERBME9EeEFSRWhNVUZSWVhHQmthR3h3ZEhoOCIsIm9yaWdpbiI6Imh0dHBzOi8vZXhhbXBsZS5jb20iLCJjcm9zc09yaWdpbiI6ZmFsc2V9",
            authenticatorData: "o3mm9u6vuaVeN4wRgDTidR5oL6ufLTCrE9ISVYbOGUcdAAAAAQ",
            signature: "GNlw4-Oc7YgtKFRofexqBoVuqex8wrm5gKSE7Cz3vj5LL1yXZxa9RmBx0r1YAg_B4i_mL3IHz4A9rRzHYV0fCw"),
        "RS256": Vector(
            credentialId: "xTaBDmYLC4Hvif4AgfdZHNuWrKQMjxcIFf4BGco8GfQ",
            registrationClientData: "eyJ0eXBlIjoid2ViYXV0aG4uY3JlYXRlIiwiY2hhbGxlbmdlIjoiQUFFQ0F3UUZCZ2NJQ1FvTERBME9EeEFSRWhNVUZSWVhHQmthR3h3ZEhoOCIsIm9yaWdpbiI6Imh0dHBzOi8vZXhhbXBsZS5jb20iLCJjcm9zc09yaWdpbiI6ZmFsc2V9",
            attestationObject: "o2NmbXRmcGFja2VkZ2F0dFN0bXSiY2FsZzkBAGNzaWdZAQBGGOWHd0bQ7nqUV2gLDUwvGROeP4rSXIbevuLnWFKSLfA18sr7VODsXMLOwdI8xMQsvjCKbSonu3xXnm5yP_17EDJjhyrj8tyO0ZtsppGv5qZHApLHGBo5DpBbTJ2A9sTlYlEo68uuOARr1RIPfqfN9qcMJTm4jSnxcHIgB9ZTqxSv-Jtbi__zs2DuYmUBGQfJheba1S3befLam3EQrBlebZPu4A82lJWaKYQ6S0JAxcL15bZubezLICq435vopi09YTxo_1iU88oLRPtcV0ukmlYR6cKTsnuigseydcIM32mmbH_4Q6DuePlTXJKPYzbGysbURvGggtOth3_C4RscaGF1dGhEYXRhWQFno3mm9u6vuaVeN4wRgDTidR5oL6ufLTCrE9ISVYbOGUddAAAAAAAAAAAAAAAAAAAAAAAAAAAAIMU2gQ5mCwuB74n-AIH3WRzblqykDI8XCBX-ARnKPBn0pAEDAzkBACBZAQDxG03LNdu-3ULG-B-vijGz-9gq4yPlKb9TW9qiW23FR0qzR_RrAs-nc5hAl0riJKjgV1VNUudvxu3WfvBO72NXk1mKAzbPz54rQ2PD5t1gBtJzmUVOm7U1Opm39VnIcCjRmxSwEJI-T1uslZ23SCatzNOAby44efbzccTo_YVON76cor2N5TcSNPwpMjXdl16oiFpJfZbFitL5V74jWZToM4LcV31X4kY0zU75HFX3GxEGtCVptPW_UJoJEgovxoeOAOSiP2pkl0f7SfGtuqN6iAVMtcxbARv2qt9Uwj9GgdY8PQdLmHm3NBz4mW-TuzoZu6QGSnQ7HbAckR2PGZvLIUMBAAE",
            assertionClientData: "eyJ0eXBlIjoid2ViYXV0aG4uZ2V0IiwiY2hhbGxlbmdlIjoiQUFFQ0F3UUZCZ2NJQ1FvTERBME9EeEFSRWhNVUZSWVhHQmthR3h3ZEhoOCIsIm9yaWdpbiI6Imh0dHBzOi8vZXhhbXBsZS5jb20iLCJjcm9zc09yaWdpbiI6ZmFsc2V9",
            authenticatorData: "o3mm9u6vuaVeN4wRgDTidR5oL6ufLTCrE9ISVYbOGUcdAAAAAQ",
            signature: "BlZVEeRvbrpmuR7Dd54ERPAOMlVfx5pHf5OUYVj77E5C4Y0SBp4ld785Lt6yBVqxgAQCMYOJHDqSPIBIK50SyMpkxXommYkVQfWOgy2LYUzGE4IHS8EMsBZa1d8NHs3BYAzpmEX3NFZ2uDx9qw6WJ-7WrxQJ1ZZ5b-ZpB2dWaqZ-qvKYpVB1yjRSloaJuhV8a1aj70EfmrLRaUfhSJJgacPESZn00FVNxP6akmj2jCYdejQR8uKCLZavTjzg8q83vOLVeHD26WTsFRmbVF7NAKdB_jWFE78WoRArfWmycJ4nLJCE-YghII-Su3Ljwrs9MsePeHoNoU4dzNfOkx045w"),
    ]

    let challengeHash = Digest.sha256(Array(0..<32))
    let party = RelyingParty(id: "example.com", origins: ["https://example.com"], requireUserVerification: true)

    func bytes(_ text: String) -> [UInt8] { Base64URL.decode(text) ?? [] }

    func register(_ vector: Vector, party: RelyingParty? = nil) throws -> RelyingParty.Registration {
        try (party ?? self.party).verifyRegistration(clientDataJSON: bytes(vector.registrationClientData),
                                                     attestationObject: bytes(vector.attestationObject),
                                                     challengeHash: challengeHash)
    }

    func assert(_ vector: Vector, key: COSEKey, party: RelyingParty? = nil, clientData: [UInt8]? = nil,
                authenticatorData: [UInt8]? = nil, signature: [UInt8]? = nil) throws -> RelyingParty.Assertion {
        try (party ?? self.party).verifyAssertion(clientDataJSON: clientData ?? bytes(vector.assertionClientData),
                                                  authenticatorData: authenticatorData ?? bytes(vector.authenticatorData),
                                                  signature: signature ?? bytes(vector.signature),
                                                  challengeHash: challengeHash, credentialKey: key)
    }

    func testEachAlgorithmRegistersAndSignsIn() throws {
        for (name, vector) in Self.vectors {
            let registration = try register(vector)
            XCTAssertEqual(registration.credentialId, bytes(vector.credentialId), name)
            XCTAssertEqual(registration.format, "packed", name)
            XCTAssertTrue(registration.userVerified && registration.backupEligible && registration.backupState, name)
            // The stored form parses back to the same key.
            let stored = try COSEKey.parse(registration.publicKey.encoded)
            XCTAssertEqual(stored, registration.publicKey, name)
            let assertion = try assert(vector, key: stored)
            XCTAssertEqual(assertion.signCount, 1, name)
        }
    }

    func testWrongOriginRpIdOrChallengeIsRefused() throws {
        let vector = try XCTUnwrap(Self.vectors["ES256"])
        let key = try register(vector).publicKey
        let otherOrigin = RelyingParty(id: "example.com", origins: ["https://other.example.com"], requireUserVerification: false)
        XCTAssertThrowsError(try register(vector, party: otherOrigin))
        XCTAssertThrowsError(try assert(vector, key: key, party: otherOrigin))
        let otherRp = RelyingParty(id: "other.com", origins: ["https://example.com"], requireUserVerification: false)
        XCTAssertThrowsError(try register(vector, party: otherRp))
        XCTAssertThrowsError(try assert(vector, key: key, party: otherRp))
        XCTAssertThrowsError(try party.verifyAssertion(clientDataJSON: bytes(vector.assertionClientData),
                                                       authenticatorData: bytes(vector.authenticatorData),
                                                       signature: bytes(vector.signature),
                                                       challengeHash: Digest.sha256([1]), credentialKey: key))
        // A creation's clientData is not an assertion's.
        XCTAssertThrowsError(try assert(vector, key: key, clientData: bytes(vector.registrationClientData)))
    }

    func testTamperedBytesAreRefused() throws {
        for (name, vector) in Self.vectors {
            let key = try register(vector).publicKey
            var signature = bytes(vector.signature)
            signature[signature.count / 2] ^= 1
            XCTAssertThrowsError(try assert(vector, key: key, signature: signature), name)
            var data = bytes(vector.authenticatorData)
            data[36] ^= 1  // the counter
            XCTAssertThrowsError(try assert(vector, key: key, authenticatorData: data), name)
            var clientData = bytes(vector.assertionClientData)
            clientData.insert(0x20, at: clientData.count - 1)  // still the same JSON, not the same bytes
            XCTAssertThrowsError(try assert(vector, key: key, clientData: clientData), name)
        }
    }

    func testAnotherCredentialsKeyDoesNotVerify() throws {
        let es = try register(XCTUnwrap(Self.vectors["ES256"])).publicKey
        XCTAssertThrowsError(try assert(XCTUnwrap(Self.vectors["EdDSA"]), key: es))
    }

    func testSignCountRule() {
        XCTAssertTrue(RelyingParty.signCountAccepted(stored: 0, received: 0))
        XCTAssertTrue(RelyingParty.signCountAccepted(stored: 0, received: 1))
        XCTAssertTrue(RelyingParty.signCountAccepted(stored: 5, received: 6))
        XCTAssertFalse(RelyingParty.signCountAccepted(stored: 5, received: 5))
        XCTAssertFalse(RelyingParty.signCountAccepted(stored: 5, received: 4))
        XCTAssertFalse(RelyingParty.signCountAccepted(stored: 5, received: 0))
    }

    func testMalformedInputIsRefusedNotTrapped() throws {
        XCTAssertThrowsError(try CBOR.decode([]))
        XCTAssertThrowsError(try CBOR.decode([0xa1]))                   // a map with its pair missing
        XCTAssertThrowsError(try CBOR.decode([0x01, 0x02]))             // trailing bytes
        XCTAssertThrowsError(try CBOR.decode([0xa2, 0x01, 0x01, 0x01, 0x02]))  // duplicate key
        XCTAssertThrowsError(try AuthenticatorData.parse(Array(repeating: 0, count: 36)))
        XCTAssertThrowsError(try COSEKey.parse([0xa1, 0x01, 0x02]))     // kty without alg
        // An EC2 key whose point is not on P-256.
        var pairs: [UInt8] = [0xa5, 0x01, 0x02, 0x03, 0x26, 0x20, 0x01, 0x21, 0x58, 0x20]
        pairs += Array(repeating: 1, count: 32) + [0x22, 0x58, 0x20] + Array(repeating: 2, count: 32)
        XCTAssertThrowsError(try COSEKey.parse(pairs))
        XCTAssertThrowsError(try CredentialResponse.parse(json: "[]"))
        XCTAssertThrowsError(try ClientData.parse(Array("{}".utf8)))
    }

    func testCBORDecodesWhatWebAuthnUses() throws {
        // {"a": h'0102', 1: -7, "b": [true, null]}
        let value = try CBOR.decode([0xa3, 0x61, 0x61, 0x42, 0x01, 0x02, 0x01, 0x26, 0x61, 0x62, 0x82, 0xf5, 0xf6])
        XCTAssertEqual(value[text: "a"], .bytes([1, 2]))
        XCTAssertEqual(value[int: 1]?.int, -7)
        XCTAssertEqual(value[text: "b"], .array([.bool(true), .null]))
    }
}
