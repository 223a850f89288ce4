import IdentityKit

/// HKDF with SHA-256 (RFC 5869), built on `Digest.hmacSHA256` (OpenSSL): the one way new
/// sub-keys are made from the master key, each bound to its purpose by a label, so no key
/// serves two purposes and no process needs more than the sub-keys of its own jobs.
public enum HKDF {
    /// `length` bytes (at most 255 × 32) of output keying material.
    public static func sha256(key: [UInt8], salt: [UInt8] = [], info: [UInt8], length: Int = 32) -> [UInt8] {
        let length = min(max(length, 1), 255 * 32)
        let prk = Digest.hmacSHA256(key: salt.isEmpty ? [UInt8](repeating: 0, count: 32) : salt, key)
        var output: [UInt8] = []
        var block: [UInt8] = []
        var counter: UInt8 = 1
        while output.count < length {
            block = Digest.hmacSHA256(key: prk, block + info + [counter])
            output += block
            counter &+= 1
        }
        return Array(output.prefix(length))
    }

    /// A 32-byte sub-key of the master key for one purpose (`label`, versioned: `…-v1`).
    public static func subkey(of masterKey: [UInt8], label: String) -> [UInt8] {
        sha256(key: masterKey, salt: Array("identity-service".utf8), info: Array(label.utf8))
    }
}
