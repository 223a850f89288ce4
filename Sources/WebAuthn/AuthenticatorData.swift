/// Authenticator data (WebAuthn §6.1): rpIdHash ‖ flags ‖ signCount ‖ [attested credential
/// data] ‖ [extensions].
public struct AuthenticatorData: Sendable {
    public let rpIdHash: [UInt8]
    public let flags: UInt8
    public let signCount: UInt32
    public let attested: AttestedCredential?

    public struct AttestedCredential: Sendable {
        public let aaguid: [UInt8]
        public let credentialId: [UInt8]
        public let publicKey: COSEKey
    }

    public var userPresent: Bool { flags & 0x01 != 0 }
    public var userVerified: Bool { flags & 0x04 != 0 }
    /// Backup eligible: the credential may be synced (a multi-device passkey).
    public var backupEligible: Bool { flags & 0x08 != 0 }
    /// Backed up: it is synced now.
    public var backupState: Bool { flags & 0x10 != 0 }
    var hasAttestedCredential: Bool { flags & 0x40 != 0 }
    var hasExtensions: Bool { flags & 0x80 != 0 }

    /// WebAuthn credential ids are at most 1023 bytes (§5.1 / CTAP 2.1).
    static let maximumCredentialIdLength = 1023

    public static func parse(_ bytes: [UInt8]) throws(WebAuthnError) -> AuthenticatorData {
        guard bytes.count >= 37 else { throw .malformed("authenticator data shorter than 37 bytes") }
        let flags = bytes[32]
        let signCount = bytes[33..<37].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        var offset = 37
        var attested: AttestedCredential?
        if flags & 0x40 != 0 {
            guard bytes.count >= offset + 18 else { throw .malformed("attested credential data truncated") }
            let aaguid = Array(bytes[offset..<offset + 16])
            let idLength = Int(bytes[offset + 16]) << 8 | Int(bytes[offset + 17])
            offset += 18
            guard idLength > 0, idLength <= maximumCredentialIdLength, bytes.count >= offset + idLength else {
                throw .malformed("credential id length")
            }
            let credentialId = Array(bytes[offset..<offset + idLength])
            offset += idLength
            let (keyItem, used) = try CBOR.decodePrefix(bytes[offset...])
            let key = try COSEKey.parse(keyItem, encoded: Array(bytes[offset..<offset + used]))
            offset += used
            attested = AttestedCredential(aaguid: aaguid, credentialId: credentialId, publicKey: key)
        }
        if flags & 0x80 != 0 {
            // Extensions: one CBOR map, read only to find where it ends.
            let (extensions, used) = try CBOR.decodePrefix(bytes[offset...])
            guard case .map = extensions else { throw .malformed("extensions are not a map") }
            offset += used
        }
        guard offset == bytes.count else { throw .malformed("bytes after authenticator data") }
        return AuthenticatorData(rpIdHash: Array(bytes[0..<32]), flags: flags, signCount: signCount, attested: attested)
    }
}
