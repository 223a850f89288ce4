import Foundation

/// RFC 3339 UTC timestamps with microseconds (`2026-09-27T10:15:00.000000Z`), as PRODUCT.md
/// requires. Formatted by hand from the broken-down time: DateFormatter is slow and not
/// thread-safe to share.
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
        return String(format: "%04d-%02d-%02dT%02d:%02d:%02d.%06dZ",
                      Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1, Int(parts.tm_mday),
                      Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec), fraction)
    }

    /// Seconds since the epoch, as JWT claims carry them.
    public static func nowSeconds() -> Int64 { Int64(Date().timeIntervalSince1970) }
}
