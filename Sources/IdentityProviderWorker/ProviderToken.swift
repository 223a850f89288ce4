import Foundation
import IdentityKit

/// The claims of a provider's id token whose RS256 signature checked out against the
/// provider's JWKS. Any failure is the provider's `invalid-…-token`, except an unreachable
/// provider with no cached keys (503).
struct ProviderToken {
    let claims: [String: JSONValue]

    init(_ token: String, keys: JWKSCache, provider: String) throws {
        let invalid = ProviderErrors.invalidToken(provider)
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard token.utf8.count < 16_384, parts.count == 3, let headerBytes = Base64URL.decode(parts[0]),
              let header = JSONValue.parse(Data(headerBytes), maximumBytes: JWT.maximumPartBytes),
              header["alg"] == .string("RS256"), case .string(let kid)? = header["kid"]
        else { throw invalid }
        guard let key = try keys.key(kid: kid) else { throw invalid }
        let payload: [UInt8]
        do {
            payload = try JWT.verifiedPayload(token) { _ in key }
        } catch {
            throw invalid
        }
        guard case .object(let claims)? = JSONValue.parse(Data(payload), maximumBytes: JWT.maximumPartBytes) else { throw invalid }
        self.claims = claims
    }

    func string(_ name: String) -> String? {
        if case .string(let value)? = claims[name], !value.isEmpty { return value }
        return nil
    }

    func number(_ name: String) -> Int64? {
        if case .number(let value)? = claims[name] { return Int64(value) }
        return nil
    }

    /// Apple sends booleans as strings ("true"); Google and Firebase as JSON booleans.
    func flag(_ name: String) -> Bool {
        switch claims[name] {
        case .bool(let value)?: value
        case .string(let value)?: value == "true"
        default: false
        }
    }

    /// `aud` as a string or a list, checked against the accepted audiences; returns the match.
    func audience(in accepted: [String]) -> String? {
        switch claims["aud"] {
        case .string(let value)?: return accepted.contains(value) ? value : nil
        case .array(let values)?:
            for case .string(let value) in values where accepted.contains(value) { return value }
            return nil
        default: return nil
        }
    }

    /// `exp` in the future; `iat` (and `auth_time`) not in the future beyond clock skew;
    /// `iat` no older than `maximumAge` when given.
    func hasValidTimes(now: Int64, maximumAge: Int64? = nil, skew: Int64 = 60) -> Bool {
        guard let exp = number("exp"), exp > now, let iat = number("iat"), iat <= now + skew else { return false }
        if let authTime = number("auth_time"), authTime > now + skew { return false }
        if let maximumAge, iat < now - maximumAge { return false }
        return true
    }
}
