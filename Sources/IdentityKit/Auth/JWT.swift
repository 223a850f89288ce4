import Foundation

/// Compact JWS with RS256, ES256 or EdDSA: an app's access tokens use the algorithm of its
/// current key (`SigningAlgorithm`). The header's `alg` is checked before anything else and
/// must then be the algorithm of the key its `kid` names, so `none`, HS256-with-the-public-key
/// and any algorithm confusion between an app's keys are refused whatever the claims say.
public enum JWT {
    struct Header: Codable {
        var alg: String
        var typ: String?
        var kid: String?
    }

    /// The most bytes a token's header or claims may decode to. Tokens are a few hundred
    /// bytes; providers' id tokens are refused past 16 KiB whole (`ProviderToken`).
    public static let maximumPartBytes = 16 * 1024

    /// The `typ` of this service's access tokens (RFC 9068): an id token or any other JWT
    /// signed by the same key can never pass as one.
    public static let accessTokenType = "at+jwt"

    /// Signs an access token (`typ: at+jwt`).
    public static func sign<Claims: Encodable>(_ claims: Claims, kid: String, key: TokenSigningKey) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let header = try encoder.encode(Header(alg: key.algorithm.rawValue, typ: accessTokenType, kid: kid))
        let payload = try encoder.encode(claims)
        let signingInput = Base64URL.encode(header) + "." + Base64URL.encode(payload)
        let signature = try key.sign(Array(signingInput.utf8))
        return signingInput + "." + Base64URL.encode(signature)
    }

    /// Seconds of clock skew tolerated between machines: an `iat` up to this far ahead of our
    /// clock is another machine's clock, beyond it a forged or broken token. `exp` gets none:
    /// an expired token is 401 `auth/token-expired` at once (docs/api-contract.md, "Tokens and
    /// sessions"), and the client refreshes.
    public static let clockSkew: Int64 = 30

    public enum VerificationFailure: Error, Equatable {
        case malformed, unsupportedAlgorithm, wrongType, unknownKey, badSignature, expired, wrongIssuer, wrongAudience,
             issuedInTheFuture
    }

    /// Checks an access token: `typ` `at+jwt`, the signature with the key `keyFor(kid)`
    /// returns, then `iss`, `aud`, `exp` and `iat` (not more than `clockSkew` ahead).
    public static func verify<Key: JWSVerificationKey>(_ token: String, issuer: String, audience: String, now: Int64,
                              keyFor: (String) -> Key?) throws(VerificationFailure) -> AccessTokenClaims {
        let payload = try verifiedPayload(token, type: accessTokenType, keyFor: keyFor)
        // Signed by us, so not hostile unless a key leaked; still checked by the strict parser
        // first (depth, size, duplicate claims), and only then decoded through the claims'
        // Codable names, which signing uses too. On a document the strict parser accepts,
        // JSONDecoder cannot read anything different.
        guard (try? JSONParser.parse(payload, maximumBytes: maximumPartBytes)) != nil,
              let claims = try? JSONDecoder().decode(AccessTokenClaims.self, from: Data(payload)) else {
            throw .malformed
        }
        guard claims.iss == issuer else { throw .wrongIssuer }
        guard claims.aud == audience else { throw .wrongAudience }
        guard claims.exp > now else { throw .expired }
        guard claims.iat <= now + clockSkew else { throw .issuedInTheFuture }
        return claims
    }

    /// The algorithms a header may name at all; each key then accepts only its own.
    static let supportedAlgorithms: Set<String> = Set(SigningAlgorithm.allCases.map(\.rawValue))

    /// The payload bytes of a token whose signature checks out with `keyFor(kid)`, under that
    /// key's own algorithm (and whose `typ` is `type`, case-insensitively, when one is asked
    /// for); the claims are the caller's to check.
    public static func verifiedPayload<Key: JWSVerificationKey>(_ token: String, type: String? = nil,
                                       keyFor: (String) -> Key?) throws(VerificationFailure) -> [UInt8] {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3,
              let headerBytes = Base64URL.decode(parts[0]),
              let payloadBytes = Base64URL.decode(parts[1]),
              let signature = Base64URL.decode(parts[2]),
              // The header is read before any signature is checked: anyone's bytes, so only
              // the strict parser sees them, and the three fields are taken from its value.
              let json = try? JSONParser.parse(headerBytes, maximumBytes: maximumPartBytes),
              let header = Header(json)
        else { throw .malformed }
        guard supportedAlgorithms.contains(header.alg) else { throw .unsupportedAlgorithm }
        if let type, header.typ?.lowercased() != type { throw .wrongType }
        guard let kid = header.kid, let key = keyFor(kid) else { throw .unknownKey }
        guard header.alg == key.jwsAlgorithm else { throw .unsupportedAlgorithm }
        let signingInput = Array(token.utf8.prefix(parts[0].utf8.count + 1 + parts[1].utf8.count))
        guard key.verifySignature(signingInput, signature: signature) else { throw .badSignature }
        return payloadBytes
    }

    /// A compact JWS signed with ES256 (an EC P-256 key), as Apple's client secrets are.
    public static func signES256(_ claims: JSONValue, kid: String, key: ECSigningKey) throws -> String {
        let header: JSONValue = .object(["alg": .string("ES256"), "kid": .string(kid)])
        let signingInput = Base64URL.encode(Array(header.serialized.utf8)) + "." + Base64URL.encode(Array(claims.serialized.utf8))
        return signingInput + "." + Base64URL.encode(try key.signES256(Array(signingInput.utf8)))
    }
}

extension JWT.Header {
    /// What `Decodable` would read: `alg` a string, `typ` and `kid` strings, null or absent.
    init?(_ json: JSONValue) {
        guard case .object(let fields) = json, case .string(let alg)? = fields["alg"] else { return nil }
        func optional(_ name: String) -> String?? {
            switch fields[name] {
            case nil, .null?: return .some(nil)
            case .string(let value)?: return .some(value)
            default: return nil
            }
        }
        guard let typ = optional("typ"), let kid = optional("kid") else { return nil }
        self.init(alg: alg, typ: typ, kid: kid)
    }
}

/// A public key that checks JWS signatures of one algorithm: an app's token keys and the
/// providers' RSA keys.
public protocol JWSVerificationKey {
    var jwsAlgorithm: String { get }
    func verifySignature(_ message: [UInt8], signature: [UInt8]) -> Bool
}

extension RSAKey: JWSVerificationKey {
    public var jwsAlgorithm: String { "RS256" }
    public func verifySignature(_ message: [UInt8], signature: [UInt8]) -> Bool { verifyRS256(message, signature: signature) }
}

extension TokenSigningKey: JWSVerificationKey {
    public var jwsAlgorithm: String { algorithm.rawValue }
    public func verifySignature(_ message: [UInt8], signature: [UInt8]) -> Bool { verify(message, signature: signature) }
}
