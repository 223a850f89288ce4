import Foundation

/// RFC 3339 UTC timestamps with microseconds (`2026-09-27T10:15:00.000000Z`), as the API contract
/// requires (docs/api-contract.md, "Conventions for every endpoint"). Formatted by hand from the
/// broken-down time: DateFormatter is slow and not thread-safe to share.
public enum Timestamp {
    public static func rfc3339(_ date: Date) -> String {
        let micros = Int64((date.timeIntervalSince1970 * 1_000_000).rounded(.down))
        return rfc3339(microsecondsSinceEpoch: micros)
    }

    public static func rfc3339(microsecondsSinceEpoch micros: Int64) -> String {
        var seconds = time_t(micros / 1_000_000)
        let fraction = Int(micros % 1_000_000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        // Digits written by hand: String(format:) went through CFString and was 3.5 % of the
        // machine's CPU under GET /v1/me (three timestamps a user object).
        var text = [UInt8](repeating: 0, count: 27)
        func put(_ value: Int, width: Int, at offset: Int) {
            var rest = value
            for index in stride(from: offset + width - 1, through: offset, by: -1) {
                text[index] = UInt8(truncatingIfNeeded: 48 + rest % 10)
                rest /= 10
            }
        }
        put(Int(parts.tm_year) + 1900, width: 4, at: 0)
        put(Int(parts.tm_mon) + 1, width: 2, at: 5)
        put(Int(parts.tm_mday), width: 2, at: 8)
        put(Int(parts.tm_hour), width: 2, at: 11)
        put(Int(parts.tm_min), width: 2, at: 14)
        put(Int(parts.tm_sec), width: 2, at: 17)
        put(fraction, width: 6, at: 20)
        for (offset, byte) in [(4, "-"), (7, "-"), (10, "T"), (13, ":"), (16, ":"), (19, "."), (26, "Z")] as [(Int, Unicode.Scalar)] {
            text[offset] = UInt8(byte.value)
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// Seconds since the epoch, as JWT claims carry them.
    public static func nowSeconds() -> Int64 { Int64(Date().timeIntervalSince1970) }
}
