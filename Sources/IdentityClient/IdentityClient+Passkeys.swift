import Foundation

/// WebAuthn options from the service, to hand to the platform (`ASAuthorizationPlatformPublicKeyCredentialProvider`
/// on Apple platforms, `navigator.credentials` on the web, Credential Manager on Android).
public struct PasskeyOptions: Sendable, Equatable {
    /// The sign-in flow to finish with ``IdentityClient/signInWithPasskey(flowID:assertion:upgradeGuest:)``
    /// (nil for a registration, which the session itself ties together).
    public let flowID: String?
    /// For a sign-in with an identifier: whether it has a registered passkey (the call takes the
    /// same time either way, so it reveals nothing about the account's existence).
    public let hasPasskeys: Bool
    /// The challenge, raw bytes (the options carry it base64url-encoded).
    public let challenge: Data
    /// The relying-party id (the domain the passkey belongs to).
    public let relyingPartyID: String?
    /// For a registration: the user handle (raw bytes) to create the credential for.
    public let userID: Data?
    /// For a registration: the name of the account to show.
    public let userName: String?
    /// For a sign-in with an identifier: that account's credential ids (`allowCredentials`).
    public let allowedCredentialIDs: [Data]
    /// `required`, `preferred` or `discouraged` (`userVerification`), when the options say.
    public let userVerification: String?
    /// The whole `PublicKeyCredentialCreationOptions`/`RequestOptions` JSON, for platforms that take it as is.
    public let json: Data
}

/// A new credential from the platform (an attestation), as bytes.
public struct PasskeyRegistration: Sendable {
    public let credentialID: Data
    public let clientDataJSON: Data
    public let attestationObject: Data
    /// `internal`, `hybrid`, `usb`, ...
    public let transports: [String]

    public init(credentialID: Data, clientDataJSON: Data, attestationObject: Data, transports: [String] = []) {
        self.credentialID = credentialID
        self.clientDataJSON = clientDataJSON
        self.attestationObject = attestationObject
        self.transports = transports
    }
}

/// A sign-in assertion from the platform, as bytes.
public struct PasskeyAssertion: Sendable {
    public let credentialID: Data
    public let clientDataJSON: Data
    public let authenticatorData: Data
    public let signature: Data
    /// The user handle the authenticator returned (required for a sign-in without identifier).
    public let userHandle: Data?

    public init(credentialID: Data, clientDataJSON: Data, authenticatorData: Data, signature: Data, userHandle: Data?) {
        self.credentialID = credentialID
        self.clientDataJSON = clientDataJSON
        self.authenticatorData = authenticatorData
        self.signature = signature
        self.userHandle = userHandle
    }
}

/// A registered passkey (`GET /v1/me/passkeys`).
public struct Passkey: Sendable, Equatable, Decodable {
    /// `pk_…`
    public let id: String
    public let name: String
    public let credentialID: String
    public let transports: [String]
    public let backupEligible: Bool
    public let backupState: Bool
    public let createdAt: Date
    public let lastUsedAt: Date?

    enum CodingKeys: String, CodingKey {
        case id, name, transports
        case credentialID = "credential_id", backupEligible = "backup_eligible", backupState = "backup_state"
        case createdAt = "created_at", lastUsedAt = "last_used_at"
    }
}

extension IdentityClient {
    /// Options for a passkey sign-in; with an `identifier` (email or username) they list that
    /// account's credentials, without it the platform offers every passkey it has for the site.
    public func passkeySignInOptions(identifier: String? = nil) async throws -> PasskeyOptions {
        let data = try Transport.rawData(of: try await send(.passkeySignInOptions(identifier: identifier)))
        guard let options = data["options"] as? [String: Any] else {
            throw IdentityClientError.invalidResponse(status: 200, body: "passkey options without options")
        }
        return try passkeyOptions(options, flowID: data["flow_id"] as? String, hasPasskeys: data["has_passkeys"] as? Bool ?? false)
    }

    /// Signs in with the platform's assertion for ``passkeySignInOptions(identifier:)``.
    public func signInWithPasskey(flowID: String, assertion: PasskeyAssertion, upgradeGuest: Bool = false) async throws -> SignInResult {
        var response: JSONObject = ["clientDataJSON": .string(Base64URL.encode(assertion.clientDataJSON)),
                                    "authenticatorData": .string(Base64URL.encode(assertion.authenticatorData)),
                                    "signature": .string(Base64URL.encode(assertion.signature))]
        if let handle = assertion.userHandle { response["userHandle"] = .string(Base64URL.encode(handle)) }
        let id = Base64URL.encode(assertion.credentialID)
        let credential: JSONObject = ["id": .string(id), "rawId": .string(id), "type": "public-key",
                                      "response": .object(response), "clientExtensionResults": .object([:])]
        return try await firstFactor(.passkeySignInVerify(flowId: flowID, response: .object(credential)), upgradeGuest: upgradeGuest)
    }

    /// Options to register a new passkey for the signed-in user.
    public func passkeyRegistrationOptions() async throws -> PasskeyOptions {
        let data = try Transport.rawData(of: try await send(.passkeyRegistrationOptions()))
        return try passkeyOptions(data, flowID: nil, hasPasskeys: false)
    }

    /// Registers the platform's new credential; returns the stored passkey.
    public func registerPasskey(_ registration: PasskeyRegistration, name: String? = nil) async throws -> Passkey {
        let id = Base64URL.encode(registration.credentialID)
        let response: JSONObject = ["clientDataJSON": .string(Base64URL.encode(registration.clientDataJSON)),
                                    "attestationObject": .string(Base64URL.encode(registration.attestationObject)),
                                    "transports": .array(registration.transports.map(JSONValue.string))]
        let credential: JSONObject = ["id": .string(id), "rawId": .string(id), "type": "public-key",
                                      "response": .object(response), "clientExtensionResults": .object([:])]
        return try Transport.data(Passkey.self, of: try await send(.registerPasskey(response: .object(credential), name: name)))
    }

    /// The user's passkeys.
    public func passkeys() async throws -> [Passkey] {
        try Transport.data([Passkey].self, of: try await send(.listPasskeys()))
    }

    /// Removes a passkey.
    public func deletePasskey(id: String) async throws {
        _ = try await send(.deletePasskey(id: id))
    }

    private func passkeyOptions(_ options: [String: Any], flowID: String?, hasPasskeys: Bool) throws -> PasskeyOptions {
        guard let challenge = (options["challenge"] as? String).flatMap(Base64URL.decode) else {
            throw IdentityClientError.invalidResponse(status: 200, body: "passkey options without challenge")
        }
        let rp = options["rp"] as? [String: Any]
        let user = options["user"] as? [String: Any]
        let allowed = (options["allowCredentials"] as? [[String: Any]] ?? []).compactMap { ($0["id"] as? String).flatMap(Base64URL.decode) }
        let selection = options["authenticatorSelection"] as? [String: Any]
        return PasskeyOptions(flowID: flowID, hasPasskeys: hasPasskeys, challenge: challenge,
                              relyingPartyID: (options["rpId"] as? String) ?? (rp?["id"] as? String),
                              userID: (user?["id"] as? String).flatMap(Base64URL.decode),
                              userName: user?["name"] as? String, allowedCredentialIDs: allowed,
                              userVerification: (options["userVerification"] ?? selection?["userVerification"]) as? String,
                              json: try JSONSerialization.data(withJSONObject: options, options: [.sortedKeys]))
    }
}
