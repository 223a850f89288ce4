import Foundation

/// One row of a result, in libpq's text format, with columns looked up by name.
public struct PGRow: Sendable {
    let values: [String?]
    let columns: [String: Int]

    public subscript(_ column: String) -> String? {
        guard let index = columns[column] else { return nil }
        return values[index]
    }

    public func string(_ column: String) -> String { self[column] ?? "" }

    public func bool(_ column: String) -> Bool { self[column] == "t" }

    public func int(_ column: String) -> Int { Int(self[column] ?? "") ?? 0 }

    public func int64(_ column: String) -> Int64 { Int64(self[column] ?? "") ?? 0 }

    /// A `bytea` column (hex output format `\x…`).
    public func bytes(_ column: String) -> [UInt8] {
        guard let text = self[column], text.hasPrefix("\\x") else { return [] }
        return Hex.decode(String(text.dropFirst(2))) ?? []
    }

    /// A `text[]` column in PostgreSQL's array literal format; elements are simple tokens here
    /// (roles, amr values), so quoting is handled but not nested arrays.
    public func stringArray(_ column: String) -> [String] {
        guard let text = self[column], text.count >= 2 else { return [] }
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
