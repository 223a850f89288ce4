import Foundation

/// One row of a result, in libpq's text format, with columns looked up by name. Reading is
/// strict: a column the query did not select, a NULL where the caller did not ask for an
/// optional, or a value that does not parse as the asked type throws `StoreError.malformedRow`
/// (a 500 and a log line) instead of passing as `""` or `0` — a typo in a column name must not
/// read as an empty password hash or a zero attempt count.
public struct PGRow: Sendable {
    let values: [String?]
    let columns: [String: Int]

    /// The raw text of a column that may be NULL.
    public func optionalString(_ column: String) throws -> String? {
        guard let index = columns[column] else { throw StoreError.malformedRow(column: column, reason: "not selected") }
        return values[index]
    }

    public func string(_ column: String) throws -> String {
        guard let value = try optionalString(column) else { throw StoreError.malformedRow(column: column, reason: "NULL") }
        return value
    }

    public func bool(_ column: String) throws -> Bool {
        switch try string(column) {
        case "t": return true
        case "f": return false
        case let other: throw StoreError.malformedRow(column: column, reason: "not a boolean: \(other.prefix(16))")
        }
    }

    public func int(_ column: String) throws -> Int { try parsed(column, Int.init) }

    public func int64(_ column: String) throws -> Int64 { try parsed(column, Int64.init) }

    public func double(_ column: String) throws -> Double { try parsed(column, Double.init) }

    /// A `bytea` column (hex output format `\x…`).
    public func bytes(_ column: String) throws -> [UInt8] {
        guard let bytes = try optionalBytes(column) else { throw StoreError.malformedRow(column: column, reason: "NULL") }
        return bytes
    }

    public func optionalBytes(_ column: String) throws -> [UInt8]? {
        guard let text = try optionalString(column) else { return nil }
        guard text.hasPrefix("\\x"), let bytes = Hex.decode(String(text.dropFirst(2))) else {
            throw StoreError.malformedRow(column: column, reason: "not bytea hex")
        }
        return bytes
    }

    /// A `text[]` column in PostgreSQL's array literal format; elements are simple tokens here
    /// (roles, amr values), so quoting is handled but not nested arrays.
    public func stringArray(_ column: String) throws -> [String] {
        let text = try string(column)
        guard text.hasPrefix("{"), text.hasSuffix("}") else {
            throw StoreError.malformedRow(column: column, reason: "not an array literal")
        }
        let inner = text.dropFirst().dropLast()
        if inner.isEmpty { return [] }
        return inner.split(separator: ",").map { item in
            var value = String(item)
            if value.hasPrefix("\""), value.hasSuffix("\""), value.count >= 2 {
                value = String(value.dropFirst().dropLast()).replacingOccurrences(of: "\\\"", with: "\"")
            }
            return value
        }
    }

    private func parsed<T>(_ column: String, _ parse: (String) -> T?) throws -> T {
        let text = try string(column)
        guard let value = parse(text) else {
            throw StoreError.malformedRow(column: column, reason: "not a \(T.self): \(text.prefix(16))")
        }
        return value
    }
}

/// Parameter values in text format.
public enum PGParam {
    public static func bytea(_ bytes: [UInt8]) -> String { "\\x" + Hex.encode(bytes) }
    public static func bool(_ value: Bool) -> String { value ? "true" : "false" }
    public static func textArray(_ values: [String]) -> String {
        "{" + values.map { "\"" + $0.replacingOccurrences(of: "\\", with: "\\\\")
            .replacingOccurrences(of: "\"", with: "\\\"") + "\"" }.joined(separator: ",") + "}"
    }
}
