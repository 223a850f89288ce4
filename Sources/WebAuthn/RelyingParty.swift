import IdentityKit

/// The checks a relying party makes (WebAuthn §7.1 registration, §7.2 authentication), for one
/// app's relying-party id and allowed origins. Stateless: the caller brings the hash of the
/// challenge it issued (from its flow row) and, for an assertion, the stored credential.
public struct RelyingParty: Sendable {
    public let id: String
    /// Exact origins: `https://host[:port]`, or `android:apk-key-hash:<hash>` for native apps.
    public let origins: [String]
    /// The app's policy: the UV flag must be set (registration and sign-in).
    public let requireUserVerification: Bool

    public init(id: String, origins: [String], requireUserVerification: Bool) {
        self.id = id
        self.origins = origins
        self.requireUserVerification = requireUserVerification
    }

    public struct Registration: Sendable {
        public let credentialId: [UInt8]
        public let publicKey: COSEKey
        public let signCount: UInt32
        public let aaguid: [UInt8]
        public let userVerified: Bool
        public let backupEligible: Bool
        public let backupState: Bool
        public let format: String
    }

    public struct Assertion: Sendable {
        public let signCount: UInt32
        public let userVerified: Bool
        public let backupEligible: Bool
        public let backupState: Bool
    }

    public func verifyRegistration(clientDataJSON: [UInt8], attestationObject: [UInt8],
                                   challengeHash: [UInt8]) throws(WebAuthnError) -> Registration {
        try checkClientData(clientDataJSON, type: "webauthn.create", challengeHash: challengeHash)
        let attestation = try AttestationObject.parse(attestationObject)
        let data = attestation.authenticatorData
        try checkAuthenticatorData(data)
        guard let credential = data.attested else { throw .refused("registration without attested credential data") }
        try attestation.verifyStatement(credentialKey: credential.publicKey,
                                        clientDataHash: Digest.sha256(clientDataJSON))
        return Registration(credentialId: credential.credentialId, publicKey: credential.publicKey,
                            signCount: data.signCount, aaguid: credential.aaguid, userVerified: data.userVerified,
                            backupEligible: data.backupEligible, backupState: data.backupState,
                            format: attestation.format)
    }

    public func verifyAssertion(clientDataJSON: [UInt8], authenticatorData: [UInt8], signature: [UInt8],
                                challengeHash: [UInt8], credentialKey: COSEKey) throws(WebAuthnError) -> Assertion {
        try checkClientData(clientDataJSON, type: "webauthn.get", challengeHash: challengeHash)
        let data = try AuthenticatorData.parse(authenticatorData)
        try checkAuthenticatorData(data)
        guard credentialKey.verify(signature: signature, message: authenticatorData + Digest.sha256(clientDataJSON)) else {
            throw .refused("assertion signature")
        }
        return Assertion(signCount: data.signCount, userVerified: data.userVerified,
                         backupEligible: data.backupEligible, backupState: data.backupState)
    }

    /// Signature counters (§6.1.1): both zero is normal (synced passkeys do not count); otherwise
    /// the new value must exceed the stored one, or the credential may have been cloned.
    public static func signCountAccepted(stored: UInt32, received: UInt32) -> Bool {
        (stored == 0 && received == 0) || received > stored
    }

    /// The challenge is compared by its SHA-256: flow rows keep only that.
    private func checkClientData(_ bytes: [UInt8], type: String, challengeHash: [UInt8]) throws(WebAuthnError) {
        let client = try ClientData.parse(bytes)
        guard client.type == type else { throw .refused("clientData type \(client.type)") }
        guard Digest.constantTimeEqual(Digest.sha256(client.challenge), challengeHash) else { throw .refused("challenge") }
        guard origins.contains(client.origin) else { throw .refused("origin") }
        guard !client.crossOrigin else { throw .refused("cross-origin iframe") }
    }

    private func checkAuthenticatorData(_ data: AuthenticatorData) throws(WebAuthnError) {
        guard Digest.constantTimeEqual(data.rpIdHash, Digest.sha256(id)) else { throw .refused("rpIdHash") }
        guard data.userPresent else { throw .refused("user not present") }
        if requireUserVerification && !data.userVerified { throw .refused("user not verified") }
        // BS without BE is not a state an authenticator may report (§6.1).
        guard data.backupEligible || !data.backupState else { throw .malformed("backup state without eligibility") }
    }
}
