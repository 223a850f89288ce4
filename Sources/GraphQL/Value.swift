import IdentityBasics

/// A GraphQL value as the executor sees it: inputs (coerced arguments and variables) and
/// results. Objects keep their keys in order, since a response lists fields in the order the
/// query asked for them.
public enum GraphQLValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case int(Int)
    case float(Double)
    case string(String)
    case list([GraphQLValue])
    case object([(String, GraphQLValue)])

    public static func == (lhs: GraphQLValue, rhs: GraphQLValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): true
        case (.bool(let a), .bool(let b)): a == b
        case (.int(let a), .int(let b)): a == b
        case (.float(let a), .float(let b)): a == b
        case (.string(let a), .string(let b)): a == b
        case (.list(let a), .list(let b)): a == b
        case (.object(let a), .object(let b)): a.count == b.count && zip(a, b).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        default: false
        }
    }

    /// The value of `key` in an object (nil when absent or not an object).
    public subscript(_ key: String) -> GraphQLValue? {
        guard case .object(let pairs) = self else { return nil }
        return pairs.first { $0.0 == key }?.1
    }

    public var string: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// Compact JSON text (RFC 8259), keys in the object's order.
    public var json: String {
        var out = ""
        writeJSON(into: &out)
        return out
    }

    func writeJSON(into out: inout String) {
        switch self {
        case .null: out += "null"
        case .bool(let value): out += value ? "true" : "false"
        case .int(let value): out += String(value)
        case .float(let value):
            if value.isFinite { out += value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value) } else { out += "null" }
        case .string(let text): JSONValue.writeString(text, into: &out)
        case .list(let items):
            out += "["
            for (index, item) in items.enumerated() {
                if index > 0 { out += "," }
                item.writeJSON(into: &out)
            }
            out += "]"
        case .object(let pairs):
            out += "{"
            for (index, (key, value)) in pairs.enumerated() {
                if index > 0 { out += "," }
                JSONValue.writeString(key, into: &out)
                out += ":"
                value.writeJSON(into: &out)
            }
            out += "}"
        }
    }

}
