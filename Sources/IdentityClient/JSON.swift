import Foundation

/// A JSON value for request bodies: `Sendable`, and encodable without `Any`.
enum JSONValue: Sendable, Encodable, ExpressibleByStringLiteral {
    case string(String), bool(Bool), number(Double), null
    case object([String: JSONValue]), array([JSONValue])

    init(stringLiteral value: String) { self = .string(value) }

    /// `.null` for nil: callers drop optional fields with ``JSONObject/compacted``.
    init(_ value: String?) { self = value.map(JSONValue.string) ?? .null }

    func encode(to encoder: Encoder) throws {
        var c = encoder.singleValueContainer()
        switch self {
        case .string(let s): try c.encode(s)
        case .bool(let b): try c.encode(b)
        case .number(let n): try c.encode(n)
        case .null: try c.encodeNil()
        case .object(let o): try c.encode(o)
        case .array(let a): try c.encode(a)
        }
    }
}

typealias JSONObject = [String: JSONValue]

extension Dictionary where Key == String, Value == JSONValue {
    /// Without the `null` entries: optional fields the caller left out are not sent.
    var compacted: JSONObject {
        filter { if case .null = $0.value { return false } else { return true } }
    }
}

enum Base64URL {
    static func encode(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    static func decode(_ text: String) -> Data? {
        var s = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        s += String(repeating: "=", count: (4 - s.count % 4) % 4)
        return Data(base64Encoded: s)
    }
}

/// Timestamps are RFC 3339 UTC with microseconds; older or foreign answers may lack the fraction.
enum Timestamps {
    static func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { d in
            let c = try d.singleValueContainer()
            let text = try c.decode(String.self)
            guard let date = parse(text) else {
                throw DecodingError.dataCorruptedError(in: c, debugDescription: "not an RFC 3339 time: \(text)")
            }
            return date
        }
        return decoder
    }

    /// Parses `2026-09-27T10:15:00.000000Z` (any number of fraction digits, or none; `Z` or an offset).
    static func parse(_ text: String) -> Date? {
        var main = text
        var fraction = 0.0
        if let dot = text.firstIndex(of: ".") {
            let rest = text[text.index(after: dot)...]
            let digits = rest.prefix { $0.isNumber }
            fraction = Double("0." + digits) ?? 0
            main = String(text[..<dot]) + String(rest.dropFirst(digits.count))
        }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.date(from: main).map { $0.addingTimeInterval(fraction) }
    }
}
