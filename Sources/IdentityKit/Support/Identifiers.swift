import Foundation

/// Ids as the API contract shapes them (docs/api-contract.md, "Conventions for every
/// endpoint"): lower-case ULIDs for users, prefixed opaque ids elsewhere.
public enum Identifiers {
    private static let crockford = Array("0123456789abcdefghjkmnpqrstvwxyz".utf8)

    /// A ULID (48-bit millisecond time, 80 random bits) in lower-case Crockford base32: ids
    /// sort by creation time, which keeps B-tree inserts at the right edge of the index.
    public static func ulid(milliseconds: UInt64 = UInt64(Timestamp.nowSeconds()) * 1000) -> String {
        ulid(milliseconds: milliseconds, random: SecureRandom.bytes(10))
    }

    public static func ulid(milliseconds: UInt64, random: [UInt8]) -> String {
        var out = [UInt8](repeating: 0, count: 26)
        var time = milliseconds
        for index in stride(from: 9, through: 0, by: -1) {
            out[index] = crockford[Int(time & 31)]
            time >>= 5
        }
        // 80 random bits → 16 characters of 5 bits.
        var accumulator: UInt32 = 0
        var bits = 0
        var position = 10
        for byte in random.prefix(10) {
            accumulator = accumulator << 8 | UInt32(byte)
            bits += 8
            while bits >= 5 {
                bits -= 5
                out[position] = crockford[Int((accumulator >> UInt32(bits)) & 31)]
                position += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    public static func nowULID() -> String {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return ulid(milliseconds: UInt64(spec.tv_sec) * 1000 + UInt64(spec.tv_nsec / 1_000_000))
    }

    /// `prefix_` + a ULID: `ses_…`, `app_…`.
    public static func prefixed(_ prefix: String) -> String { prefix + "_" + nowULID() }

    /// `prefix_` + 256 random bits in base64url: bearer secrets (refresh tokens, keys).
    public static func secret(_ prefix: String) -> String {
        prefix + "_" + Base64URL.encode(SecureRandom.bytes(32))
    }
}
