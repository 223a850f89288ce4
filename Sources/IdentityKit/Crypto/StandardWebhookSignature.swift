import Foundation

/// Signatures of the Standard Webhooks specification (standardwebhooks.com), which every
/// message we send to an app's own endpoint carries, webhooks and auth hooks alike:
///
///     webhook-id:        the message's id (the receiver's idempotency key)
///     webhook-timestamp: Unix seconds when it was signed (the receiver refuses old ones)
///     webhook-signature: "v1,<base64 HMAC-SHA256(key, id.timestamp.body)>", one per live secret,
///                        space-separated, so that a secret can be rotated with both valid at once
///
/// A secret is shown to the app as `whsec_` + base64 of 32 random bytes; the HMAC key is those bytes.
public enum StandardWebhookSignature {
    public static let secretPrefix = "whsec_"

    /// A new secret in its shown form.
    public static func newSecret() -> String {
        secretPrefix + Data(SecureRandom.bytes(32)).base64EncodedString()
    }

    /// The HMAC key of a secret in its shown form (`whsec_` optional), or nil when it is not base64
    /// of at least 16 bytes.
    public static func key(ofSecret secret: String) -> [UInt8]? {
        let encoded = secret.hasPrefix(secretPrefix) ? String(secret.dropFirst(secretPrefix.count)) : secret
        guard let bytes = Data(base64Encoded: encoded), bytes.count >= 16 else { return nil }
        return Array(bytes)
    }

    /// One `v1,` signature of `body` under `key`.
    public static func signature(id: String, timestamp: Int64, body: [UInt8], key: [UInt8]) -> String {
        var signed = Array("\(id).\(timestamp).".utf8)
        signed.append(contentsOf: body)
        return "v1," + Data(Digest.hmacSHA256(key: key, signed)).base64EncodedString()
    }

    /// The three headers of a message signed under every key in `keys` (newest first).
    public static func headers(id: String, timestamp: Int64, body: [UInt8], keys: [[UInt8]]) -> [(String, String)] {
        let signatures = keys.map { signature(id: id, timestamp: timestamp, body: body, key: $0) }
        return [("webhook-id", id), ("webhook-timestamp", String(timestamp)),
                ("webhook-signature", signatures.joined(separator: " "))]
    }

    /// Whether `header` (a `webhook-signature` value) holds a valid signature of the message
    /// under `key`, compared in constant time. For our own tests and for answers signed back to us.
    public static func verify(header: String, id: String, timestamp: Int64, body: [UInt8], key: [UInt8]) -> Bool {
        let expected = Array(signature(id: id, timestamp: timestamp, body: body, key: key).utf8)
        var matched = false
        for candidate in header.split(separator: " ") {
            matched = Digest.constantTimeEqual(Array(candidate.utf8), expected) || matched
        }
        return matched
    }
}
