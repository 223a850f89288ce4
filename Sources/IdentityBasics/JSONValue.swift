import Foundation

/// A JSON document as a value: request bodies are parsed into it so every field's type can be
/// checked and reported with its location, and responses are written from it (with explicit
/// nulls, which the user object of docs/api-contract.md, "Tokens and sessions", needs).
public enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// The document in `data`, or nil when it is not strict RFC 8259 JSON, is larger than
    /// `maximumBytes`, nests deeper than `maximumDepth` or repeats a key in one object
    /// (`JSONParser` says why; callers only need "not acceptable JSON"). The defaults are the
    /// gateway's body cap (64 KiB) and depth limit (32); callers reading larger documents pass
    /// their own cap.
    public static func parse(_ data: Data, maximumBytes: Int = JSONParser.defaultMaximumBytes,
                             maximumDepth: Int = JSONParser.defaultMaximumDepth) -> JSONValue? {
        try? JSONParser.parse(data, maximumBytes: maximumBytes, maximumDepth: maximumDepth)
    }

    /// What a request body is: a value, well-formed JSON whose strings are not all Unicode text
    /// (invalid UTF-8 or a lone surrogate: the gateway answers 422 for it, never cutting or
    /// replacing characters), or not acceptable JSON at all.
    public enum BodyParse: Sendable {
        case value(JSONValue)
        case invalidUnicode
        case malformed
    }

    public static func parseBody(_ data: Data, maximumBytes: Int = JSONParser.defaultMaximumBytes) -> BodyParse {
        do {
            return .value(try JSONParser.parse(data, maximumBytes: maximumBytes))
        } catch .invalidUnicode {
            return .invalidUnicode
        } catch {
            return .malformed
        }
    }

    public subscript(_ key: String) -> JSONValue? {
        if case .object(let object) = self { return object[key] }
        return nil
    }

    /// Compact JSON text, keys in a stable order.
    public var serialized: String {
        var out = ""
        write(into: &out)
        return out
    }

    private func write(into out: inout String) {
        switch self {
        case .null: out += "null"
        case .bool(let value): out += value ? "true" : "false"
        case .number(let value):
            if value == value.rounded(), abs(value) < 1e15 { out += String(Int64(value)) } else { out += String(value) }
        case .string(let value): Self.writeString(value, into: &out)
        case .array(let values):
            out += "["
            for (index, value) in values.enumerated() {
                if index > 0 { out += "," }
                value.write(into: &out)
            }
            out += "]"
        case .object(let object):
            out += "{"
            for (index, key) in object.keys.sorted().enumerated() {
                if index > 0 { out += "," }
                Self.writeString(key, into: &out)
                out += ":"
                object[key]?.write(into: &out)
            }
            out += "}"
        }
    }

    /// `value` as a JSON string literal, appended to `out`: the one JSON escaper of the service
    /// (JSONValue, GraphQL's responses). `<` is escaped so a document is safe to embed in a page,
    /// and U+2028 and U+2029 so it is safe in a script too.
    public static func writeString(_ value: String, into out: inout String) {
        out += "\""
        // Most strings need no escape: appended whole (per-scalar appends were 4 % of the
        // machine's CPU under GET /v1/me in a profile). 0xE2 leads U+2000...U+2FFF, where
        // U+2028 and U+2029 are: those take the loop.
        if value.utf8.allSatisfy({ $0 >= 0x20 && $0 != 0x22 && $0 != 0x5C && $0 != 0x3C && $0 != 0xE2 }) {
            out += value
            out += "\""
            return
        }
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "<": out += "\\u003c"
            default:
                if scalar.value < 0x20 || scalar.value == 0x2028 || scalar.value == 0x2029 {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        out += "\""
    }
}

extension JSONValue {
    public init(_ value: String?) { self = value.map { .string($0) } ?? .null }
    public init(_ value: Int) { self = .number(Double(value)) }
    public init(_ values: [String]) { self = .array(values.map { .string($0) }) }
}

extension JSONValue {
    /// The text of a string value; nil for any other kind.
    public var string: String? {
        if case .string(let text) = self { return text }
        return nil
    }
}
