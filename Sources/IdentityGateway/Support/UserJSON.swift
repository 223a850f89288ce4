import Foundation
import IdentityKit

/// The user object (docs/api-contract.md, "Tokens and sessions"): every key present, `null`
/// where there is no value.
enum UserJSON {
    static func make(_ user: CommonV1.User) -> JSONValue {
        .object([
            "uid": .string(user.uid),
            "email": JSONValue(user.email),
            "email_verified": .bool(user.emailVerified),
            "phone": JSONValue(user.phone),
            "username": JSONValue(user.username),
            "first_name": JSONValue(user.firstName),
            "last_name": JSONValue(user.lastName),
            "photo_url": JSONValue(user.photoUrl),
            "is_guest": .bool(user.isGuest),
            "has_password": .bool(user.hasPassword),
            "providers": JSONValue(user.providers),
            "roles": JSONValue(user.roles),
            "mfa_enabled": .bool(user.mfaEnabled),
            "created_at": .string(user.createdAt),
            "app_metadata": object(user.appMetadataJson),
            "user_metadata": object(user.userMetadataJson),
            "locale": JSONValue(user.locale),
        ])
    }

    /// The user as the admin API shows it: also its custom claims and whether it is disabled.
    static func admin(_ user: CommonV1.User) -> JSONValue {
        guard case .object(var fields) = make(user) else { return .null }
        fields["custom_claims"] = object(user.customClaimsJson)
        fields["disabled"] = .bool(user.disabled)
        return .object(fields)
    }

    /// A JSON object kept as text (metadata, claims); `{}` when empty or unreadable.
    private static func object(_ text: String) -> JSONValue {
        guard !text.isEmpty, case .object(let value)? = JSONValue.parse(Data(text.utf8)) else { return .object([:]) }
        return .object(value)
    }

    /// The answer of a sign-in: the token response (`status`: 200, or 201 for a new account), or
    /// 202 with the MFA challenge when the user has a second factor (docs/api-contract.md, "MFA").
    static func signIn(_ result: TokenV1.AuthResult, status: Int = 200) -> HTTPResponse {
        guard let mfa = result.mfa else { return .data(tokens(result), status: status) }
        return .data(.object(["mfa": .object([
            "challenge_token": .string(mfa.challengeToken),
            "expires_at": .string(mfa.expiresAt),
            "methods": JSONValue(mfa.methods),
        ])]), status: 202)
    }

    static func tokens(_ result: TokenV1.AuthResult) -> JSONValue {
        var fields: [String: JSONValue] = [
            "access_token": .string(result.accessToken),
            "token_type": .string(result.tokenType),
            "expires_in": JSONValue(Int(result.expiresIn)),
            "refresh_token": .string(result.refreshToken),
            "session_id": .string(result.sessionId),
            "is_new_user": .bool(result.isNewUser),
            "user": result.user.map(make) ?? .null,
        ]
        // Password sign-ins of standard-profile apps only (the other profiles' answers are
        // rebuilt field by field and never show it): the next sign-in's X-Device-Token.
        if !result.deviceToken.isEmpty { fields["device_token"] = .string(result.deviceToken) }
        return .object(fields)
    }
}
