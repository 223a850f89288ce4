import Foundation

/// A user of the app, as `GET /v1/me` and every sign-in answer carry it.
public struct User: Sendable, Equatable, Codable {
    /// The user's id (a lower-case ULID); stable across guest upgrade.
    public let uid: String
    public let email: String?
    public let emailVerified: Bool
    public let phone: String?
    public let username: String?
    public let firstName: String?
    public let lastName: String?
    public let photoURL: String?
    /// True for a guest made by ``IdentityClient/signInAsGuest()``, until it is upgraded.
    public let isGuest: Bool
    public let hasPassword: Bool
    /// The ways this user can sign in: `password`, `google`, `apple`, `firebase`, ...
    public let providers: [String]
    public let roles: [String]
    public let mfaEnabled: Bool
    public let createdAt: Date
    /// The language (BCP 47) mail and SMS to the user are written in; nil: none stored.
    public let locale: String?

    enum CodingKeys: String, CodingKey {
        case uid, email, phone, username, providers, roles
        case emailVerified = "email_verified", firstName = "first_name", lastName = "last_name"
        case photoURL = "photo_url", isGuest = "is_guest", hasPassword = "has_password"
        case mfaEnabled = "mfa_enabled", createdAt = "created_at", locale
    }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        uid = try c.decode(String.self, forKey: .uid)
        email = try c.decodeIfPresent(String.self, forKey: .email)
        emailVerified = try c.decodeIfPresent(Bool.self, forKey: .emailVerified) ?? false
        phone = try c.decodeIfPresent(String.self, forKey: .phone)
        username = try c.decodeIfPresent(String.self, forKey: .username)
        firstName = try c.decodeIfPresent(String.self, forKey: .firstName)
        lastName = try c.decodeIfPresent(String.self, forKey: .lastName)
        photoURL = try c.decodeIfPresent(String.self, forKey: .photoURL)
        isGuest = try c.decodeIfPresent(Bool.self, forKey: .isGuest) ?? false
        hasPassword = try c.decodeIfPresent(Bool.self, forKey: .hasPassword) ?? false
        providers = try c.decodeIfPresent([String].self, forKey: .providers) ?? []
        roles = try c.decodeIfPresent([String].self, forKey: .roles) ?? []
        mfaEnabled = try c.decodeIfPresent(Bool.self, forKey: .mfaEnabled) ?? false
        locale = try c.decodeIfPresent(String.self, forKey: .locale)
        createdAt = try c.decode(Date.self, forKey: .createdAt)
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(uid, forKey: .uid)
        try c.encodeIfPresent(email, forKey: .email)
        try c.encode(emailVerified, forKey: .emailVerified)
        try c.encodeIfPresent(phone, forKey: .phone)
        try c.encodeIfPresent(username, forKey: .username)
        try c.encodeIfPresent(firstName, forKey: .firstName)
        try c.encodeIfPresent(lastName, forKey: .lastName)
        try c.encodeIfPresent(photoURL, forKey: .photoURL)
        try c.encode(isGuest, forKey: .isGuest)
        try c.encode(hasPassword, forKey: .hasPassword)
        try c.encode(providers, forKey: .providers)
        try c.encode(roles, forKey: .roles)
        try c.encode(mfaEnabled, forKey: .mfaEnabled)
        try c.encode(createdAt, forKey: .createdAt)
        try c.encodeIfPresent(locale, forKey: .locale)
    }
}

/// The signed-in session as the access token in memory describes it
/// (``IdentityClient/currentSession``): read from the token without verifying it, for showing
/// and deciding in the app; your backend verifies the token itself.
public struct CurrentSession: Sendable, Equatable {
    /// The user's id (`sub`).
    public let userID: String
    /// The session (`ses_…`, the token's `sid`): the one ``SessionInfo/current`` marks.
    public let sessionID: String?
    /// When the access token expires, by this device's clock (the client refreshes it in the
    /// last minute before); nil when the token does not say.
    public let accessTokenExpiresAt: Date?
    /// When the service issued the access token (its clock, `iat`).
    public let accessTokenIssuedAt: Date?
    /// How the sign-in was proved (`amr`: `pwd`, `otp`, `mfa`, `google`, ...).
    public let authenticationMethods: [String]
    /// 1 for one factor, 2 with a second factor (or a user-verified passkey).
    public let assuranceLevel: Int
    public let isGuest: Bool
    public let roles: [String]
}

/// What a first-factor sign-in gives: a session, or a second factor to ask for.
public enum SignInResult: Sendable, Equatable {
    /// Signed in: the tokens are kept by the client. `isNewUser` is true when the call created the account.
    case signedIn(User, isNewUser: Bool)
    /// The user has a second factor: ask for a code and pass it to ``IdentityClient/verifyMFA(_:code:)``.
    case mfaRequired(MFAChallenge)

    /// The user when signed in, nil when a second factor is still needed.
    public var user: User? {
        if case .signedIn(let user, _) = self { return user }
        return nil
    }
}

/// A pending second-factor check (202 answer of a first-factor sign-in), valid five minutes.
public struct MFAChallenge: Sendable, Equatable, Decodable {
    /// Opaque; sent back with the code.
    public let challengeToken: String
    public let expiresAt: Date
    /// The codes accepted: `totp`, `backup_code`, `email`, `sms`.
    public let methods: [String]

    enum CodingKeys: String, CodingKey {
        case challengeToken = "challenge_token", expiresAt = "expires_at", methods
    }
}

/// The token answer of every sign-in (internal: the client keeps the tokens itself).
struct TokenResponse: Sendable, Decodable {
    let accessToken: String
    let refreshToken: String
    let expiresIn: Int?
    let sessionId: String?
    let isNewUser: Bool?
    let user: User?

    enum CodingKeys: String, CodingKey {
        case accessToken = "access_token", refreshToken = "refresh_token", expiresIn = "expires_in"
        case sessionId = "session_id", isNewUser = "is_new_user", user
    }
}

/// One live session of the user (`GET /v1/me/sessions`).
public struct SessionInfo: Sendable, Equatable, Decodable {
    /// `ses_…`
    public let id: String
    /// True for the session this client is signed in with.
    public let current: Bool
    public let createdAt: Date
    public let lastSeenAt: Date?
    public let expiresAt: Date?
    public let ip: String?
    public let userAgent: String?
    /// How the session's sign-in was proved (`pwd`, `otp`, `mfa`, `google`, ...).
    public let amr: [String]
    public let mfaVerified: Bool

    enum CodingKeys: String, CodingKey {
        case id, current, ip, amr
        case createdAt = "created_at", lastSeenAt = "last_seen_at", expiresAt = "expires_at"
        case userAgent = "user_agent", mfaVerified = "mfa_verified"
    }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(String.self, forKey: .id)
        current = try c.decodeIfPresent(Bool.self, forKey: .current) ?? false
        createdAt = try c.decode(Date.self, forKey: .createdAt)
        lastSeenAt = try c.decodeIfPresent(Date.self, forKey: .lastSeenAt)
        expiresAt = try c.decodeIfPresent(Date.self, forKey: .expiresAt)
        ip = try c.decodeIfPresent(String.self, forKey: .ip)
        userAgent = try c.decodeIfPresent(String.self, forKey: .userAgent)
        amr = try c.decodeIfPresent([String].self, forKey: .amr) ?? []
        mfaVerified = try c.decodeIfPresent(Bool.self, forKey: .mfaVerified) ?? false
    }
}

/// A push device registered by a session (`/v1/me/devices`).
public struct Device: Sendable, Equatable, Decodable {
    /// `dev_…`
    public let id: String
    public let token: String
    public let platform: String
    public let kind: String
    public let deviceName: String?
    /// The session that registered it: the device is unregistered when that session ends.
    public let sessionID: String?
    public let createdAt: Date

    enum CodingKeys: String, CodingKey {
        case id, token, platform, kind
        case deviceName = "device_name", sessionID = "session_id", createdAt = "created_at"
    }
}

/// The platform of a push device.
public enum DevicePlatform: String, Sendable { case ios, android, web }
/// The push channel of a device token.
public enum PushKind: String, Sendable { case apns, fcm, voip }

/// The user's second-factor state (`GET /v1/me/mfa`).
public struct MFAStatus: Sendable, Equatable, Decodable {
    public let enabled: Bool
    public let methods: [String]
    public let backupCodesRemaining: Int
    public let lastUsedAt: Date?
    public let enabledAt: Date?

    enum CodingKeys: String, CodingKey {
        case enabled, methods
        case backupCodesRemaining = "backup_codes_remaining", lastUsedAt = "last_used_at", enabledAt = "enabled_at"
    }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        enabled = try c.decode(Bool.self, forKey: .enabled)
        methods = try c.decodeIfPresent([String].self, forKey: .methods) ?? []
        backupCodesRemaining = try c.decodeIfPresent(Int.self, forKey: .backupCodesRemaining) ?? 0
        lastUsedAt = try c.decodeIfPresent(Date.self, forKey: .lastUsedAt)
        enabledAt = try c.decodeIfPresent(Date.self, forKey: .enabledAt)
    }
}

/// A TOTP enrolment to show the user (secret, `otpauth://` URI, QR code as SVG); confirm it with a code.
public struct TOTPEnrollment: Sendable, Equatable, Decodable {
    /// Base32, for manual entry in an authenticator app.
    public let secret: String
    public let otpauthURI: String
    public let qrSVG: String

    enum CodingKeys: String, CodingKey {
        case secret, otpauthURI = "otpauth_uri", qrSVG = "qr_svg"
    }
}

/// A raw nonce for Sign in with Apple: give ``sha256`` to `ASAuthorizationAppleIDRequest.nonce`
/// and the raw ``value`` to ``IdentityClient/signInWithApple(identityToken:authorizationCode:nonce:firstName:lastName:)``.
public struct AppleNonce: Sendable, Equatable {
    /// The raw nonce the service issued (single use, five minutes).
    public let value: String
    /// Lower-case hex SHA-256 of ``value``: what Apple must put in the identity token.
    public let sha256: String
    public let expiresAt: Date
}

/// The proof `DELETE /v1/me` wants, fresh: a new sign-in with the account's own method.
public enum DeletionProof: Sendable {
    case password(String)
    /// For guests: the stored guest secret (``IdentityClient/deleteAccount(proof:)`` fills it in with `.storedGuestSecret`).
    case guestSecret(String)
    /// The guest secret this client keeps in its storage.
    case storedGuestSecret
    case google(idToken: String)
    case apple(identityToken: String, authorizationCode: String, nonce: String)
    /// For an account with no password, provider or guest secret (email codes, passkeys): the
    /// session itself, signed in less than 5 minutes ago (sign in again first when older).
    case recentSignIn
}

/// The client's authentication state, from ``IdentityClient/authStates``: each stream starts
/// with the present state (`.signedIn` or `.signedOut`), then every change.
public enum AuthState: Sendable, Equatable {
    /// Signed in: a sign-in (or MFA verification) finished, or, first in a stream, the session
    /// kept from before with the user last known.
    case signedIn(User)
    /// The session ended: sign-out, or the service refused the refresh token (revoked, expired).
    case signedOut
    /// The tokens were refreshed.
    case refreshed
}
