import Foundation
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

    /// Exchanges an authorization code; returns Apple's refresh token.
    public func exchange(code: String, clientId: String, credentials: Credentials) throws -> String {
        let response = try http.postForm(tokenURL, fields: [
            ("client_id", clientId), ("client_secret", try clientSecret(clientId: clientId, credentials: credentials)),
            ("code", code), ("grant_type", "authorization_code"),
        ])
        guard response.status == 200, case .string(let refreshToken)? = JSONValue.parse(response.body)?["refresh_token"]
        else { throw OutboundHTTP.Failure(description: "Apple token endpoint answered \(response.status)") }
        return refreshToken
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
        let pem = try AESGCM.open(sealed, key: masterKey, associatedData: ProviderSecretAAD.applePrivateKey(appId: appId))
        return AppleClient.Credentials(teamId: team, keyId: keyId,
                                       key: try ECSigningKey.fromPEM(String(decoding: pem, as: UTF8.self)))
    }
}
