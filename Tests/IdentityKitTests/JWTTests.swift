import XCTest
@testable import IdentityKit

final class JWTTests: XCTestCase {
    private static let key = try? TokenSigningKey.generate(.rs256)
    private let issuer = "https://id.example/v1/apps/app_1"

    private func claims(exp: Int64 = Timestamp.nowSeconds() + 600) -> AccessTokenClaims {
        AccessTokenClaims(iss: issuer, aud: "app_1", sub: "uid1", sid: "ses_1", iat: exp - 600, exp: exp, jti: "j1",
                          amr: ["pwd"], isGuest: false, email: "a@b.co", emailVerified: false, roles: [])
    }

    private func signingKey() throws -> TokenSigningKey { try XCTUnwrap(Self.key) }

    func testSignedTokenVerifiesWithItsPublicKey() throws {
        let key = try signingKey()
        let token = try JWT.sign(claims(), kid: "k1", key: key)
        let publicKey = try TokenSigningKey.fromPEM(key.publicKeyPEM(), algorithm: .rs256)
        XCTAssertFalse(publicKey.isPrivate)
        let verified = try JWT.verify(token, issuer: issuer, audience: "app_1", now: Timestamp.nowSeconds()) {
            $0 == "k1" ? publicKey : nil
        }
        XCTAssertEqual(verified, claims(exp: verified.exp))
    }

    /// RFC 9068's `client_id` is written (the app id, as `aud`); a token minted before it reads as `aud`.
    func testAccessTokensCarryTheirClientId() throws {
        let token = try JWT.sign(claims(), kid: "k1", key: signingKey())
        let payload = try XCTUnwrap(Base64URL.decode(String(token.split(separator: ".")[1])))
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any])
        XCTAssertEqual(object["client_id"] as? String, "app_1")
        var older = object
        older["client_id"] = nil
        let decoded = try JSONDecoder().decode(AccessTokenClaims.self, from: JSONSerialization.data(withJSONObject: older))
        XCTAssertEqual(decoded.clientId, "app_1")
    }

    func testTamperedPayloadIsRejected() throws {
        let token = try JWT.sign(claims(), kid: "k1", key: signingKey())
        var parts = token.split(separator: ".").map(String.init)
        var payload = try XCTUnwrap(Base64URL.decode(parts[1]))
        payload[payload.count - 2] ^= 1
        parts[1] = Base64URL.encode(payload)
        XCTAssertThrowsError(try verify(parts.joined(separator: "."))) { XCTAssertEqual($0 as? JWT.VerificationFailure, .badSignature) }
    }

    func testAlgNoneAndHS256AreRejectedBeforeAnyKeyIsUsed() throws {
        let token = try JWT.sign(claims(), kid: "k1", key: signingKey())
        let parts = token.split(separator: ".").map(String.init)
        for alg in ["none", "HS256"] {
            let header = Base64URL.encode(Array(#"{"alg":"\#(alg)","kid":"k1"}"#.utf8))
            let forged = header + "." + parts[1] + "." + (alg == "none" ? "" : parts[2])
            XCTAssertThrowsError(try verify(forged)) { XCTAssertEqual($0 as? JWT.VerificationFailure, .unsupportedAlgorithm) }
        }
    }

    func testExpiredWrongAudienceUnknownKeyAndGarbage() throws {
        let key = try signingKey()
        let expired = try JWT.sign(claims(exp: Timestamp.nowSeconds() - 120), kid: "k1", key: key)
        XCTAssertThrowsError(try verify(expired)) { XCTAssertEqual($0 as? JWT.VerificationFailure, .expired) }
        let token = try JWT.sign(claims(), kid: "k1", key: key)
        XCTAssertThrowsError(try JWT.verify(token, issuer: issuer, audience: "app_2", now: Timestamp.nowSeconds()) { _ in key }) {
            XCTAssertEqual($0 as? JWT.VerificationFailure, .wrongAudience)
        }
        XCTAssertThrowsError(try JWT.verify(token, issuer: issuer, audience: "app_1", now: Timestamp.nowSeconds()) { (_: String) -> TokenSigningKey? in nil }) {
            XCTAssertEqual($0 as? JWT.VerificationFailure, .unknownKey)
        }
        XCTAssertThrowsError(try verify("not.a.jwt")) { XCTAssertEqual($0 as? JWT.VerificationFailure, .malformed) }
    }

    /// `exp` has no grace: one second past it is expired (401 auth/token-expired:
    /// docs/api-contract.md, "Tokens and sessions").
    func testASecondPastExpiryIsExpired() throws {
        let key = try signingKey()
        let now = Timestamp.nowSeconds()
        let token = try JWT.sign(claims(exp: now), kid: "k1", key: key)
        XCTAssertThrowsError(try JWT.verify(token, issuer: issuer, audience: "app_1", now: now) { _ in key }) {
            XCTAssertEqual($0 as? JWT.VerificationFailure, .expired)
        }
        XCTAssertNoThrow(try JWT.verify(token, issuer: issuer, audience: "app_1", now: now - 1) { _ in key })
    }

    /// An `iat` within the clock skew of another machine is accepted; further ahead is refused.
    func testAFutureIssueTimeBeyondTheSkewIsRefused() throws {
        let key = try signingKey()
        let now = Timestamp.nowSeconds()
        var skewed = claims()
        skewed.iat = now + JWT.clockSkew
        XCTAssertNoThrow(try JWT.verify(try JWT.sign(skewed, kid: "k1", key: key), issuer: issuer, audience: "app_1",
                                        now: now) { _ in key })
        skewed.iat = now + JWT.clockSkew + 1
        XCTAssertThrowsError(try JWT.verify(try JWT.sign(skewed, kid: "k1", key: key), issuer: issuer, audience: "app_1",
                                            now: now) { _ in key }) {
            XCTAssertEqual($0 as? JWT.VerificationFailure, .issuedInTheFuture)
        }
    }

    func testJWKComponentsAreThoseOfTheKey() throws {
        let jwk = try signingKey().publicJWK(kid: "k1")
        XCTAssertEqual(try XCTUnwrap(jwk["n"].flatMap { if case .string(let n) = $0 { Base64URL.decode(n) } else { nil } }).count, 256)
        XCTAssertEqual(jwk["e"], .string("AQAB"))
    }

    /// The header is read before the signature is checked, so it goes through the strict
    /// parser: a repeated `alg` (which one would a library pick?), deep nesting or invalid
    /// JSON is malformed before any key is looked up.
    func testHostileHeadersAreMalformedBeforeAnyKeyIsUsed() throws {
        let token = try JWT.sign(claims(), kid: "k1", key: signingKey())
        let parts = token.split(separator: ".").map(String.init)
        let headers = [
            #"{"alg":"none","alg":"RS256","kid":"k1"}"#,
            #"{"alg":"RS256","kid":"k1","kid":"k2"}"#,
            #"{"alg":"RS256","kid":"k1","x":"# + String(repeating: "[", count: 40) + String(repeating: "]", count: 40) + "}",
            #"{"alg":"RS256","kid":"k1",}"#,
            #"{"alg":"RS256","kid":"\ud800"}"#,
            #"{"alg":["RS256"],"kid":"k1"}"#,
            #"{"alg":"RS256","kid":1}"#,
        ]
        for header in headers {
            let forged = Base64URL.encode(Array(header.utf8)) + "." + parts[1] + "." + parts[2]
            var keyLookedUp = false
            XCTAssertThrowsError(try JWT.verify(forged, issuer: issuer, audience: "app_1", now: Timestamp.nowSeconds()) { _ in
                keyLookedUp = true
                return TokenSigningKey?.none
            }) { XCTAssertEqual($0 as? JWT.VerificationFailure, .malformed, header) }
            XCTAssertFalse(keyLookedUp, header)
        }
        // Nulls read as absent, as Decodable reads them: a token without `kid` names no key.
        let noKid = Base64URL.encode(Array(#"{"alg":"RS256","typ":"at+jwt","kid":null}"#.utf8)) + "." + parts[1] + "." + parts[2]
        XCTAssertThrowsError(try verify(noKid)) { XCTAssertEqual($0 as? JWT.VerificationFailure, .unknownKey) }
    }

    /// Claims signed with the right key but repeating a claim are refused too.
    func testSignedClaimsWithADuplicateAreMalformed() throws {
        let key = try signingKey()
        let header = Base64URL.encode(Array(#"{"alg":"RS256","typ":"at+jwt","kid":"k1"}"#.utf8))
        let exp = Timestamp.nowSeconds() + 600
        let payload = #"{"iss":"\#(issuer)","aud":"app_1","aud":"app_2","sub":"u","sid":"s","iat":\#(exp - 600),"exp":\#(exp),"jti":"j","amr":[],"is_guest":false,"email_verified":false,"roles":[]}"#
        let signingInput = header + "." + Base64URL.encode(Array(payload.utf8))
        let token = signingInput + "." + Base64URL.encode(try key.sign(Array(signingInput.utf8)))
        XCTAssertThrowsError(try verify(token)) { XCTAssertEqual($0 as? JWT.VerificationFailure, .malformed) }
        // Without the repeat the same hand-made token verifies: the refusal is the duplicate's.
        let fine = payload.replacingOccurrences(of: #""aud":"app_2","#, with: "")
        let fineInput = header + "." + Base64URL.encode(Array(fine.utf8))
        let fineToken = fineInput + "." + Base64URL.encode(try key.sign(Array(fineInput.utf8)))
        XCTAssertEqual(try verify(fineToken).aud, "app_1")
    }

    /// RFC 9068: an access token says `typ: at+jwt`; any other JWT signed by the same key (an
    /// id token, a client secret, a token of another kind) is not one.
    func testOnlyAccessTokenTypedJWTsAreAccessTokens() throws {
        let key = try signingKey()
        let token = try JWT.sign(claims(), kid: "k1", key: key)
        let header = try XCTUnwrap(JSONValue.parse(Data(try XCTUnwrap(Base64URL.decode(String(token.split(separator: ".")[0]))))))
        XCTAssertEqual(header["typ"], .string("at+jwt"))
        let payload = String(token.split(separator: ".")[1])
        for typ in [#""JWT""#, "null", #""id+jwt""#, #""at+jwt ""#] {
            let forgedHeader = Base64URL.encode(Array(#"{"alg":"RS256","typ":\#(typ),"kid":"k1"}"#.utf8))
            let input = forgedHeader + "." + payload
            let forged = input + "." + Base64URL.encode(try key.sign(Array(input.utf8)))
            XCTAssertThrowsError(try verify(forged), typ) { XCTAssertEqual($0 as? JWT.VerificationFailure, .wrongType, typ) }
        }
        let upper = Base64URL.encode(Array(#"{"alg":"RS256","typ":"AT+JWT","kid":"k1"}"#.utf8)) + "." + payload
        XCTAssertNoThrow(try verify(upper + "." + Base64URL.encode(try key.sign(Array(upper.utf8)))))
    }

    private func verify(_ token: String) throws -> AccessTokenClaims {
        let key = try signingKey()
        return try JWT.verify(token, issuer: issuer, audience: "app_1", now: Timestamp.nowSeconds()) { _ in key }
    }
}
