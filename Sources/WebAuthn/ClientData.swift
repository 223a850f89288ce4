import Foundation
import IdentityKit

/// `CollectedClientData` (WebAuthn §5.8.1), parsed from `clientDataJSON` as the client sent it;
/// the signature covers the SHA-256 of those exact bytes, so they are hashed, never re-encoded.
public struct ClientData: Sendable {
    public let type: String
    public let challenge: [UInt8]
    public let origin: String
    public let crossOrigin: Bool

    public static func parse(_ bytes: [UInt8]) throws(WebAuthnError) -> ClientData {
        guard bytes.count <= 4096,
              let object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any]
        else { throw .malformed("clientDataJSON is not a JSON object") }
        guard let type = object["type"] as? String, let challengeText = object["challenge"] as? String,
              let origin = object["origin"] as? String
        else { throw .malformed("clientDataJSON lacks type, challenge or origin") }
        guard let challenge = Base64URL.decode(challengeText) else { throw .malformed("challenge is not base64url") }
        return ClientData(type: type, challenge: challenge, origin: origin,
                          crossOrigin: (object["crossOrigin"] as? Bool) ?? false)
    }
}
