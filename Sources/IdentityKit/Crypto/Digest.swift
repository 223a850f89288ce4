import COpenSSL

/// SHA-256, HMAC-SHA-256 (and HMAC-SHA-1 for TOTP) and constant-time comparison.
public enum Digest {
    public static func sha256(_ data: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        _ = SHA256(data, data.count, &out)
        return out
    }

    public static func sha256(_ text: String) -> [UInt8] { sha256(Array(text.utf8)) }

    public static func hmacSHA256(key: [UInt8], _ data: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        _ = HMAC(EVP_sha256(), key, Int32(key.count), data, data.count, &out, &length)
        return out
    }

    /// HMAC-SHA-1: only for TOTP (RFC 6238's default, which every authenticator app speaks).
    public static func hmacSHA1(key: [UInt8], _ data: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 20)
        var length: UInt32 = 0
        _ = HMAC(EVP_sha1(), key, Int32(key.count), data, data.count, &out, &length)
        return out
    }

    /// Compares secrets without leaking, through timing, where they first differ.
    public static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        if a.isEmpty { return true }
        return CRYPTO_memcmp(a, b, a.count) == 0
    }
}

