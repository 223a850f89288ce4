/// Trimming and form decoding in Swift itself, for the request path. Foundation's
/// `trimmingCharacters`, `replacingOccurrences` and `removingPercentEncoding` go through
/// NSString on Linux: a profile of `POST /v1/token/introspect` under load put them at a third of
/// the gateway's CPU, for a form body of one field.
public enum TextScanning {
    /// `text` without leading and trailing white space (Unicode White_Space, as Foundation's
    /// `.whitespaces`; with `newlines`, as `.whitespacesAndNewlines`).
    public static func trimmed<S: StringProtocol>(_ text: S, newlines: Bool = false) -> String {
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
            if let equals = pair.firstIndex(of: UInt8(ascii: "=")),
               percentDecoded(pair[..<equals], plusIsSpace: true) == name {
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

    static func percentDecoded(_ text: ArraySlice<UInt8>, plusIsSpace: Bool) -> String? {
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
