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

/// How a log line is written: logfmt (`key=value`, the default) or one JSON object per line
/// (`IDENTITY_LOG_FORMAT=json`, for log shippers that index fields).
public enum LogFormat: String, Sendable {
    case logfmt, json
}

/// One line per event on stderr. Callers pass only non-secret values: never a password,
/// token, code, key or hash.
///
/// The request id of the work being done is added to every line written inside
/// `Log.withRequestId` (the gateway's dispatch, a worker's command), so one id finds every
/// line of every process that handled a request, with no caller passing it by hand.
public enum Log {
    private static let minimum = Locked<LogLevel>(.info)
    private static let format = Locked<LogFormat>(.logfmt)
    /// The request id of the request or command this thread (or task) is working on.
    @TaskLocal public static var requestId: String?

    public static func setLevel(_ level: LogLevel) { minimum.withLock { $0 = level } }
    public static func setFormat(_ newFormat: LogFormat) { format.withLock { $0 = newFormat } }

    /// Runs `body` with `id` added to every line it logs (unless a line names its own).
    public static func withRequestId<R>(_ id: String, _ body: () throws -> R) rethrows -> R {
        guard !id.isEmpty else { return try body() }
        return try $requestId.withValue(id, operation: body)
    }

    /// The format lines are written in now (`IDENTITY_LOG_FORMAT` once the process applied it).
    public static var currentFormat: LogFormat { format.withLock { $0 } }

    public static func debug(_ message: String, _ fields: LogFields = [:]) { write(.debug, message, fields) }
    public static func info(_ message: String, _ fields: LogFields = [:]) { write(.info, message, fields) }
    public static func warning(_ message: String, _ fields: LogFields = [:]) { write(.warning, message, fields) }
    public static func error(_ message: String, _ fields: LogFields = [:]) { write(.error, message, fields) }

    private static func write(_ level: LogLevel, _ message: String, _ given: LogFields) {
        guard level >= minimum.withLock({ $0 }) else { return }
        var fields = given
        if fields["request_id"] == nil, let id = requestId { fields["request_id"] = id }
        let line = render(level, message, fields, format: format.withLock { $0 }, time: Timestamp.rfc3339(Date()))
        FileHandle.standardError.write(Data(line.utf8))
    }

    /// One line (with its newline) in `format`; fields in name order after time, level, msg.
    static func render(_ level: LogLevel, _ message: String, _ fields: LogFields, format: LogFormat,
                       time: String) -> String {
        switch format {
        case .logfmt:
            var line = "time=\(time) level=\(level.rawValue) msg=\(quote(message))"
            for key in fields.keys.sorted() {
                line += " \(key)=\(quote(fields[key]?.logValue.text ?? ""))"
            }
            return line + "\n"
        case .json:
            var line = "{\"time\":\(jsonString(time)),\"level\":\(jsonString(level.rawValue)),\"msg\":\(jsonString(message))"
            for key in fields.keys.sorted() where !["time", "level", "msg"].contains(key) {
                line += ",\(jsonString(key)):\(json(fields[key]?.logValue ?? .string("")))"
            }
            return line + "}\n"
        }
    }

    /// A JSON value: numbers and booleans as themselves (a number JSON cannot write, NaN or
    /// infinite, as its text), strings quoted.
    private static func json(_ value: LogValue) -> String {
        switch value {
        case .int(let number): String(number)
        case .bool(let flag): String(flag)
        case .double(let number) where number.isFinite: String(number)
        case .double, .string: jsonString(value.text)
        }
    }

    private static func quote(_ value: String) -> String {
        if !value.isEmpty, !value.contains(where: { $0 == " " || $0 == "\"" || $0 == "=" || $0.isNewline }) {
            return value
        }
        return "\"" + value.replacingOccurrences(of: "\\", with: "\\\\")
            .replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n") + "\""
    }

    /// A JSON string literal: quotes, backslashes and every control character escaped.
    private static func jsonString(_ value: String) -> String {
        var out = "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x7f || scalar.value == 0x2028 || scalar.value == 0x2029:
                out += String(format: "\\u%04x", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
