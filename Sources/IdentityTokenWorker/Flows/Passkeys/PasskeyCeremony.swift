import IdentityCredentials
import IdentityKit
import WebAuthn

/// What both passkey ceremonies share: the app's relying party, challenges, user handles, and
/// the JSON of the options a client hands to `navigator.credentials.create/get`.
struct PasskeyCeremony: Sendable {
    let passkeys: PasskeyStore
    /// HMAC key for user handles (`SubKey.passkeyUserHandle`).
    let userHandleKey: [UInt8]
    /// HMAC key for decoy credential ids (`SubKey.passkeyDecoy`).
    let decoyKey: [UInt8]
    /// How long a ceremony stays open (options → finish/verify).
    let lifetimeSeconds: Int

    static let algorithms: [COSEKey.Algorithm] = [.es256, .edDSA, .rs256]

    /// The app's relying party, or 422 when the app has not configured passkeys.
    func relyingParty(appId: String) throws -> (RelyingParty, WebAuthnSettings) {
        guard let settings = try passkeys.settings(appId: appId), !settings.rpId.isEmpty, !settings.origins.isEmpty else {
            throw ServiceError.passkeyNotConfigured
        }
        return (RelyingParty(id: settings.rpId, origins: settings.origins,
                             requireUserVerification: settings.requireUserVerification), settings)
    }

    /// 32 random bytes: the challenge; the flow row keeps only its SHA-256.
    func newChallenge() -> [UInt8] { SecureRandom.bytes(32) }

    /// The opaque per-user id given to authenticators (WebAuthn's user handle must not be an
    /// email or other personal data): stable, so every credential of one user carries the same.
    func userHandle(appId: String, uid: String) -> [UInt8] {
        Digest.hmacSHA256(key: userHandleKey, Array("\(appId)\u{0}\(uid)".utf8))
    }

    /// The `allowCredentials` answered for an identifier with no passkeys (or no account): the
    /// same identifier always gets the same list, so asking twice does not tell a decoy apart.
    func decoyCredentials(appId: String, identifier: String) -> [JSONValue] {
        let seed = Digest.hmacSHA256(key: decoyKey, Array("\(appId)\u{0}\(identifier.lowercased())".utf8))
        // Real credential ids are 16 bytes (many platform passkeys) to 64 and more (security keys).
        let length = seed[0] & 1 == 0 ? 16 : 32
        let id = Array(Digest.hmacSHA256(key: decoyKey, seed).prefix(length))
        return [Self.descriptor(id: id, transports: ["hybrid", "internal"])]
    }

    static func descriptor(id: [UInt8], transports: [String]) -> JSONValue {
        var object: [String: JSONValue] = ["type": .string("public-key"), "id": .string(Base64URL.encode(id))]
        if !transports.isEmpty { object["transports"] = JSONValue(transports) }
        return .object(object)
    }

    func userVerification(_ settings: WebAuthnSettings) -> JSONValue {
        .string(settings.requireUserVerification ? "required" : "preferred")
    }

    var timeoutMilliseconds: JSONValue { JSONValue(lifetimeSeconds * 1000) }

    /// Logs why a response was refused (never to the client) and returns the one answer.
    static func refusal(_ error: any Error, appId: String, flowId: String) -> ServiceError {
        let why = (error as? WebAuthnError)?.reason ?? "\(type(of: error))"
        Log.info("passkey response refused", ["app_id": appId, "flow_id": flowId, "why": why])
        return .invalidPasskey
    }

    static func message(_ record: PasskeyRecord) -> TokenV1.Passkey {
        TokenV1.Passkey(id: record.id, name: record.name, credentialId: Base64URL.encode(record.credentialId),
                        transports: record.transports, aaguid: Self.uuid(record.aaguid),
                        backupEligible: record.backupEligible, backupState: record.backupState,
                        createdAt: Timestamp.rfc3339(microsecondsSinceEpoch: record.createdAtMicros),
                        lastUsedAt: record.lastUsedAtMicros.map { Timestamp.rfc3339(microsecondsSinceEpoch: $0) })
    }

    /// An AAGUID in its usual 8-4-4-4-12 form.
    static func uuid(_ bytes: [UInt8]) -> String {
        let hex = Hex.encode(bytes)
        guard hex.count == 32 else { return hex }
        let chars = Array(hex)
        return [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { String(chars[$0]) }.joined(separator: "-")
    }
}
