import Foundation

public enum LogLevel: String, Sendable, Comparable {
    case debug, info, warning, error

    private var rank: Int {
        switch self {
        case .debug: 0
        case .info: 1
        case .warning: 2
        case .error: 3
        }
    }

    public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rank < rhs.rank }
}

/// One line of logfmt per event on stderr. Callers pass only non-secret values: never a
/// password, token, code, key or hash.
public enum Log {
    private static let minimum = Locked<LogLevel>(.info)

    public static func setLevel(_ level: LogLevel) { minimum.withLock { $0 = level } }

    public static func debug(_ message: String, _ fields: [String: String] = [:]) { write(.debug, message, fields) }
    public static func info(_ message: String, _ fields: [String: String] = [:]) { write(.info, message, fields) }
    public static func warning(_ message: String, _ fields: [String: String] = [:]) { write(.warning, message, fields) }
    public static func error(_ message: String, _ fields: [String: String] = [:]) { write(.error, message, fields) }

    private static func write(_ level: LogLevel, _ message: String, _ fields: [String: String]) {
        guard level >= minimum.withLock({ $0 }) else { return }
        var line = "time=\(Timestamp.rfc3339(Date())) level=\(level.rawValue) msg=\(quote(message))"
        for key in fields.keys.sorted() {
            line += " \(key)=\(quote(fields[key] ?? ""))"
        }
        line += "\n"
        FileHandle.standardError.write(Data(line.utf8))
    }

    private static func quote(_ value: String) -> String {
        if !value.isEmpty, !value.contains(where: { $0 == " " || $0 == "\"" || $0 == "=" || $0.isNewline }) {
            return value
        }
        return "\"" + value.replacingOccurrences(of: "\\", with: "\\\\")
            .replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n") + "\""
    }
}
