import IdentityKit

/// Every key the service uses is a sub-key of the master key, made with HKDF (RFC 5869) and a
/// label naming its one purpose, so no key serves two purposes, no process holds more than the
/// sub-keys of its own jobs (the mailer gets `mailPayload` alone), and the master key itself
/// never keys a cipher or an HMAC. A label is versioned: changing what a key protects means a
/// new label, never a new use of an old one.
public enum SubKey: String, CaseIterable, Sendable {
    /// Private signing keys at rest (`signing_keys.private_key_enc`).
    case signingKeySeal = "seal-signing-key-v1"
    /// Apple credentials at rest: the app's `.p8` and users' Apple refresh tokens, in rows and in
    /// revocation commands.
    case appleSecretSeal = "seal-apple-secret-v1"
    /// Apple authorization codes while they cross the bus (token worker → provider or
    /// revocation worker).
    case busSecretSeal = "seal-bus-secret-v1"
    /// First refresh tokens derived from command ids (`SessionIssuer`).
    case commandSession = "command-session-v2"
    /// Keyed hashes of mailed codes (`VerificationCodeStore`).
    case verificationCode = "verification-code-v2"
    /// Keyed hashes of guest secrets.
    case guestSecret = "guest-secret-v2"
    /// Successor refresh tokens derived during the grace period (`TokenRefresh`).
    case refreshSuccessor = "refresh-token-successor-v2"
    /// MACs of verified provider identities (`ProviderIdentitySeal`).
    case providerIdentityMAC = "provider-identity-mac-v1"
    /// Passkey user handles: an opaque per-user id for authenticators, HMAC of app and uid.
    case passkeyUserHandle = "passkey-user-handle-v1"
    /// The deterministic decoy `allowCredentials` answered for an identifier without passkeys.
    case passkeyDecoy = "passkey-decoy-credential-v1"
    /// Codes inside mail commands (`MailPayloadSeal`); the only sub-key mailer workers hold.
    case mailPayload = "mail-payload-v1"
    /// Apps' SMS auth tokens at rest (`SmsCredentialSeal`). Derived from the `mailPayload`
    /// sub-key, not from the master key: the mailer, which holds only that sub-key, must open them.
    case smsCredential = "sms-credential-v1"
    /// Apps' auth hook secrets at rest (`AuthHookSecretSeal`), derived from the `mailPayload`
    /// sub-key like `smsCredential`: the mailer calls the send hooks and must open them.
    case authHookSecret = "auth-hook-secret-v1"
    /// TOTP secrets at rest (`TOTPSecretSeal`).
    case totpSecretSeal = "mfa-totp-secret-v1"
    /// Keyed hashes of MFA backup codes.
    case backupCode = "mfa-backup-code-v1"
    /// The password pepper: what Argon2id hashes is HMAC-SHA-256 under it of the password
    /// (`PasswordHasher.peppered(masterKey:)`, stored forms `$pepper-v1$argon2id$…`).
    case passwordPepper = "password-pepper-v1"
    /// MFA challenge tokens derived from command ids.
    case challengeToken = "mfa-challenge-token-v1"
    /// Sign-in device tokens derived from command ids (`SignInDevices`).
    case signInDeviceToken = "sign-in-device-token-v1"
    /// Apps' push credentials at rest (the APNs `.p8`, the FCM service-account key,
    /// `PushSettingsStore`); mailer workers hold this sub-key (IDENTITY_PUSH_CREDENTIAL_KEY).
    case pushCredentialSeal = "seal-push-credential-v1"
    /// Apps' webhook signing secrets at rest (`webhook_endpoints.secret_enc`); webhook workers
    /// hold this sub-key (IDENTITY_WEBHOOK_SECRET_KEY), never the master key.
    case webhookSecretSeal = "seal-webhook-secret-v1"

    public func derive(from masterKey: [UInt8]) -> [UInt8] { HKDF.subkey(of: masterKey, label: rawValue) }
}

/// AES-256-GCM under one sub-key: what seals a secret for a row or a message. The associated
/// data binds each sealed value to its owner (`SigningKeyAAD`, `ProviderSecretAAD`).
public struct SecretSealer: Sendable {
    let key: [UInt8]

    public init(masterKey: [UInt8], purpose: SubKey) { key = purpose.derive(from: masterKey) }

    /// A sealer given the sub-key itself (a process that holds one sub-key, not the master key).
    public init(subKey: [UInt8]) { key = subKey }

    public func seal(_ plaintext: [UInt8], associatedData: [UInt8]) throws -> [UInt8] {
        try AESGCM.seal(plaintext, key: key, associatedData: associatedData)
    }

    public func open(_ sealed: [UInt8], associatedData: [UInt8]) throws -> [UInt8] {
        try AESGCM.open(sealed, key: key, associatedData: associatedData)
    }
}
