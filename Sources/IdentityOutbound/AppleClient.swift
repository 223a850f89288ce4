import Foundation
import IdentityCredentials
import IdentityKit

/// Apple's token endpoints: the authorization-code exchange (at sign-in) and token
/// revocation (at account deletion), each authenticated with a client secret: an ES256 JWT
/// signed with the app's `.p8` key, `iss` = team id, `sub` = client id.
public struct AppleClient: Sendable {
    public let tokenURL: String
    public let revokeURL: String
    public let http: OutboundHTTP

    public init(tokenURL: String, revokeURL: String, http: OutboundHTTP) {
        self.tokenURL = tokenURL
        self.revokeURL = revokeURL
        self.http = http
    }

    public struct Credentials: Sendable {
        public let teamId: String
        public let keyId: String
        public let key: ECSigningKey
        public init(teamId: String, keyId: String, key: ECSigningKey) {
            self.teamId = teamId
            self.keyId = keyId
            self.key = key
        }
    }

    /// A client secret valid for five minutes (Apple allows up to six months; short is safer).
    public func clientSecret(clientId: String, credentials: Credentials, now: Int64 = Timestamp.nowSeconds()) throws -> String {
        let claims: JSONValue = .object([
            "iss": .string(credentials.teamId), "iat": .number(Double(now)), "exp": .number(Double(now + 300)),
            "aud": .string("https://appleid.apple.com"), "sub": .string(clientId),
        ])
        return try JWT.signES256(claims, kid: credentials.keyId, key: credentials.key)
    }

    /// Apple refused the request itself (a 4xx other than 408 and 429): `invalid_grant` for a
    /// code that is spent, expired or unknown, `invalid_client` for a bad client secret. Sending
    /// the same request again cannot succeed, unlike after a timeout or a 5xx.
    public struct Refusal: Error, CustomStringConvertible, Sendable {
        public let status: Int
        /// Apple's `error` field (`invalid_grant`…): a fixed word, never a secret.
        public let error: String
        public var description: String { "Apple answered \(status) \(error)" }
    }

    /// Exchanges an authorization code; returns Apple's refresh token. Throws `Refusal` when
    /// Apple will never exchange this code, `OutboundHTTP.Failure` when a retry may work.
    public func exchange(code: String, clientId: String, credentials: Credentials) throws -> String {
        let response = try http.postForm(tokenURL, fields: [
            ("client_id", clientId), ("client_secret", try clientSecret(clientId: clientId, credentials: credentials)),
            ("code", code), ("grant_type", "authorization_code"),
        ])
        let body = JSONValue.parse(response.body)
        if (400...499).contains(response.status) && response.status != 408 && response.status != 429 {
            throw Refusal(status: response.status, error: Self.errorWord(body?["error"]))
        }
        guard response.status == 200, case .string(let refreshToken)? = body?["refresh_token"]
        else { throw OutboundHTTP.Failure(description: "Apple token endpoint answered \(response.status)") }
        return refreshToken
    }

    /// Apple's `error` value when it is the short word Apple documents, else `unknown`: what
    /// goes into a log line must not be able to carry anything else.
    private static func errorWord(_ value: JSONValue?) -> String {
        guard case .string(let word)? = value, (1...40).contains(word.count),
              word.allSatisfy({ $0.isASCII && ($0.isLowercase || $0 == "_") }) else { return "unknown" }
        return word
    }

    /// Revokes an Apple refresh token; true when Apple answered 200.
    public func revoke(refreshToken: String, clientId: String, credentials: Credentials) throws -> Bool {
        let response = try http.postForm(revokeURL, fields: [
            ("client_id", clientId), ("client_secret", try clientSecret(clientId: clientId, credentials: credentials)),
            ("token", refreshToken), ("token_type_hint", "refresh_token"),
        ])
        return response.status == 200
    }
}

/// The app's Apple client-secret credentials, with the `.p8` unsealed.
public enum AppleCredentials {
    public static func load(_ settings: ProviderSettings, appId: String, masterKey: [UInt8]) throws -> AppleClient.Credentials? {
        guard let team = settings.appleTeamId, let keyId = settings.appleKeyId, let sealed = settings.applePrivateKeySealed
        else { return nil }
        let pem = try SecretSealer(masterKey: masterKey, purpose: .appleSecretSeal).open(sealed, associatedData: ProviderSecretAAD.applePrivateKey(appId: appId))
        return AppleClient.Credentials(teamId: team, keyId: keyId,
                                       key: try ECSigningKey.fromPEM(String(decoding: pem, as: UTF8.self)))
    }
}
