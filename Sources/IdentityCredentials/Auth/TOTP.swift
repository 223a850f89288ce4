import IdentityKit

/// Time-based one-time passwords (RFC 6238 over RFC 4226's HOTP): HMAC-SHA-1 (OpenSSL), 6 digits,
/// 30-second steps, what every authenticator app does by default. Checking accepts the current
/// step and one either side (clock drift); that a code is used once is the store's job
/// (`MfaStore.advanceTOTP`: the last accepted step only moves forward).
public enum TOTP {
    public static let period: Int64 = 30
    public static let digits = 6
    /// Steps accepted either side of now.
    public static let window: Int64 = 1

    /// The time step of a Unix time.
    public static func step(at seconds: Int64) -> Int64 { seconds / period }

    /// The code of `step` for `secret` (RFC 4226, section 5.3: dynamic truncation).
    public static func code(secret: [UInt8], step: Int64, digits: Int = TOTP.digits) -> String {
        var counter: [UInt8] = []
        withUnsafeBytes(of: UInt64(bitPattern: step).bigEndian) { counter = Array($0) }
        let mac = Digest.hmacSHA1(key: secret, counter)
        let offset = Int(mac[mac.count - 1] & 0x0f)
        let binary = (UInt32(mac[offset] & 0x7f) << 24) | (UInt32(mac[offset + 1]) << 16)
            | (UInt32(mac[offset + 2]) << 8) | UInt32(mac[offset + 3])
        var modulus: UInt32 = 1
        for _ in 0..<digits { modulus *= 10 }
        let number = String(binary % modulus)
        return String(repeating: "0", count: digits - number.count) + number
    }

    /// The step within ±`window` of `now` whose code is `code`, if any. Every candidate is
    /// computed and compared in constant time, so timing does not tell which step matched.
    public static func matchingStep(_ code: String, secret: [UInt8], now: Int64) -> Int64? {
        guard code.utf8.count == digits, code.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) else { return nil }
        let current = step(at: now)
        var found: Int64?
        for candidate in (current - window)...(current + window) {
            if Digest.constantTimeEqual(Array(Self.code(secret: secret, step: candidate).utf8), Array(code.utf8)),
               found == nil {
                found = candidate
            }
        }
        return found
    }

    /// The `otpauth://` URI authenticator apps scan (Key Uri Format): issuer and account label.
    public static func uri(secret: [UInt8], issuer: String, account: String) -> String {
        let label = percentEncode(issuer) + ":" + percentEncode(account)
        return "otpauth://totp/\(label)?secret=\(Base32.encode(secret))&issuer=\(percentEncode(issuer))"
            + "&algorithm=SHA1&digits=\(digits)&period=\(period)"
    }

    /// RFC 3986 unreserved characters kept, everything else percent-encoded (spaces too).
    static func percentEncode(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                 UInt8(ascii: "~"), UInt8(ascii: "@"):
                out.append(Character(UnicodeScalar(byte)))
            default:
                let hex = Array("0123456789ABCDEF")
                out += "%" + String(hex[Int(byte >> 4)]) + String(hex[Int(byte & 15)])
            }
        }
        return out
    }
}
