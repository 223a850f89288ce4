import Foundation
import IdentityKit

/// A `PublicKeyCredential` as JSON (WebAuthn Level 3 `toJSON()`, the shape @simplewebauthn and
/// the platform SDKs send): `{id, rawId, type, response: {…}}`, binary fields base64url.
public struct CredentialResponse: Sendable {
    public let rawId: [UInt8]
    public let clientDataJSON: [UInt8]
    /// Registration only.
    public let attestationObject: [UInt8]?
    public let transports: [String]
    /// Assertion only.
    public let authenticatorData: [UInt8]?
    public let signature: [UInt8]?
    public let userHandle: [UInt8]?

    /// Transports a client may report (WebAuthn `AuthenticatorTransport`); others are dropped.
    static let knownTransports: Set<String> = ["usb", "nfc", "ble", "smart-card", "hybrid", "internal"]

    public static func parse(json text: String) throws(WebAuthnError) -> CredentialResponse {
        guard let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] else {
            throw .malformed("credential is not a JSON object")
        }
        func bytes(_ value: Any?) throws(WebAuthnError) -> [UInt8]? {
            guard let value else { return nil }
            if value is NSNull { return nil }
            guard let text = value as? String, let decoded = Base64URL.decode(text) else {
                throw .malformed("binary field is not base64url")
            }
            return decoded
        }
        guard (object["type"] as? String) == "public-key" else { throw .malformed("type is not public-key") }
        guard let rawId = try bytes(object["rawId"] ?? object["id"]), !rawId.isEmpty,
              rawId.count <= AuthenticatorData.maximumCredentialIdLength else { throw .malformed("rawId") }
        // `id` is the same bytes base64url-encoded; when both come they must agree.
        if let id = try bytes(object["id"]), id != rawId { throw .malformed("id differs from rawId") }
        guard let response = object["response"] as? [String: Any],
              let clientDataJSON = try bytes(response["clientDataJSON"]) else { throw .malformed("response.clientDataJSON") }
        let transports = ((response["transports"] as? [Any]) ?? []).compactMap { $0 as? String }
            .filter(knownTransports.contains)
        return CredentialResponse(rawId: rawId, clientDataJSON: clientDataJSON,
                                  attestationObject: try bytes(response["attestationObject"]),
                                  transports: Array(Set(transports)).sorted(),
                                  authenticatorData: try bytes(response["authenticatorData"]),
                                  signature: try bytes(response["signature"]),
                                  userHandle: try bytes(response["userHandle"]))
    }
}
