import Glibc

/// Trimming and form decoding in Swift itself, for the request path. Foundation's
/// `trimmingCharacters`, `replacingOccurrences` and `removingPercentEncoding` go through
/// NSString on Linux: a profile of `POST /v1/token/introspect` under load put them at a third of
/// the gateway's CPU, for a form body of one field.
public enum TextScanning {
    /// `text` without leading and trailing white space (Unicode White_Space, as Foundation's
    /// `.whitespaces`; with `newlines`, as `.whitespacesAndNewlines`).
    public static func trimmed<S: StringProtocol>(_ text: S, newlines: Bool = false) -> String {
        // Most text has nothing to trim: its first and last bytes are printable ASCII, which no
        // white space is, so it is returned without walking its Characters.
        let whole = String(text)
        if let first = whole.utf8.first, let last = whole.utf8.last, (0x21...0x7E).contains(first),
           (0x21...0x7E).contains(last) {
            return whole
        }
        let blank: (Character) -> Bool = { $0.isWhitespace && (newlines || !$0.isNewline) }
        guard let first = text.firstIndex(where: { !blank($0) }),
              let last = text.lastIndex(where: { !blank($0) }) else { return "" }
        return String(text[first...last])
    }

    /// The value of the first field called `name` in an `application/x-www-form-urlencoded`
    /// body (`+` is a space, `%XX` a byte), or nil when there is none or it does not decode
    /// (a malformed escape, bytes that are not UTF-8). Scanned as bytes, never as Characters.
    public static func formValue(_ name: String, in body: [UInt8]) -> String? {
        var start = 0
        while start < body.count {
            let end = body[start...].firstIndex(of: UInt8(ascii: "&")) ?? body.count
            let pair = body[start..<end]
            if let equals = pair.firstIndex(of: UInt8(ascii: "=")), named(pair[..<equals], name) {
                return percentDecoded(pair[(equals + 1)...], plusIsSpace: true)
            }
            start = end + 1
        }
        return nil
    }

    /// `%XX` escapes decoded (RFC 3986); `+` stays unless `plusIsSpace`. Nil for a malformed
    /// escape or bytes that are not UTF-8 (as `removingPercentEncoding`).
    public static func percentDecoded(_ text: Substring, plusIsSpace: Bool = false) -> String? {
        let bytes = Array(text.utf8)
        return percentDecoded(bytes[...], plusIsSpace: plusIsSpace)
    }

    /// Whether a form field's encoded name is `name`: compared as bytes when it has no escape
    /// (the usual case), decoded first otherwise.
    private static func named(_ encoded: ArraySlice<UInt8>, _ name: String) -> Bool {
        if !contains(UInt8(ascii: "%"), in: encoded), !contains(UInt8(ascii: "+"), in: encoded) {
            return encoded.elementsEqual(name.utf8)
        }
        return percentDecoded(encoded, plusIsSpace: true) == name
    }

    static func percentDecoded(_ text: ArraySlice<UInt8>, plusIsSpace: Bool) -> String? {
        // Nothing to decode (a token, a key): one UTF-8 check, no byte-by-byte copy.
        if !contains(UInt8(ascii: "%"), in: text), !(plusIsSpace && contains(UInt8(ascii: "+"), in: text)) {
            return String(validating: text, as: UTF8.self)
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.count)
        var index = text.startIndex
        while index < text.endIndex {
            let byte = text[index]
            index += 1
            switch byte {
            case UInt8(ascii: "%"):
                guard index + 1 < text.endIndex,
                      let high = Hex.nibble(text[index]), let low = Hex.nibble(text[index + 1]) else { return nil }
                bytes.append(high << 4 | low)
                index += 2
            case UInt8(ascii: "+") where plusIsSpace:
                bytes.append(UInt8(ascii: " "))
            default:
                bytes.append(byte)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }
}

extension TextScanning {
    /// Whether `byte` is in `bytes` (memchr: a long token is scanned in wide steps, not a byte at
    /// a time).
    public static func contains(_ byte: UInt8, in bytes: ArraySlice<UInt8>) -> Bool {
        bytes.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return false }
            return memchr(base, Int32(byte), buffer.count) != nil
        }
    }

    /// Whether a form body may hold a field called `name`: it holds `name`'s bytes, or a `%`
    /// (an escaped name could be anything), or a `+` (a space). A body without any of them is
    /// known not to hold the field before it is parsed.
    public static func mayHoldField(_ name: String, inForm body: UnsafeRawBufferPointer) -> Bool {
        guard let base = body.baseAddress, !name.isEmpty else { return false }
        if memchr(base, Int32(UInt8(ascii: "%")), body.count) != nil || memchr(base, Int32(UInt8(ascii: "+")), body.count) != nil {
            return true
        }
        let needle = Array(name.utf8)
        var from = 0
        // Each candidate start found by memchr, then compared (memmem is not in Glibc's module).
        while from + needle.count <= body.count,
              let hit = memchr(base + from, Int32(needle[0]), body.count - from - needle.count + 1) {
            if memcmp(hit, needle, needle.count) == 0 { return true }
            from = base.distance(to: UnsafeRawPointer(hit)) + 1
        }
        return false
    }

    /// Whether `text` holds a NUL byte: memchr over its UTF-8 where it is contiguous (a native
    /// String always is), instead of a Swift loop over a long token's bytes.
    public static func hasNUL(_ text: String) -> Bool {
        text.utf8.withContiguousStorageIfAvailable { bytes in
            guard let base = bytes.baseAddress else { return false }
            return memchr(base, 0, bytes.count) != nil
        } ?? text.utf8.contains(0)
    }
}
