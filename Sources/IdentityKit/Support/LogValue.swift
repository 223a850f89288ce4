/// A log line's fields by name. Values keep their type, so a JSON line carries numbers and
/// booleans as JSON numbers and booleans (`"status":200`) and logfmt writes them as text.
public typealias LogFields = [String: any LogValueConvertible]

/// One field's value: text, an integer, a floating-point number or a boolean.
public enum LogValue: Sendable, Equatable {
    case string(String)
    case int(Int64)
    case double(Double)
    case bool(Bool)

    /// The value as logfmt writes it (before quoting).
    public var text: String {
        switch self {
        case .string(let text): text
        case .int(let number): String(number)
        case .double(let number): String(number)
        case .bool(let flag): String(flag)
        }
    }
}

/// What a log field may hold. Only plain values conform: a field is something a caller chose to
/// show, never a whole request or record (which could carry a secret).
public protocol LogValueConvertible: Sendable {
    var logValue: LogValue { get }
}

extension LogValue: LogValueConvertible {
    public var logValue: LogValue { self }
}

extension String: LogValueConvertible {
    public var logValue: LogValue { .string(self) }
}

extension Substring: LogValueConvertible {
    public var logValue: LogValue { .string(String(self)) }
}

extension Bool: LogValueConvertible {
    public var logValue: LogValue { .bool(self) }
}

extension Double: LogValueConvertible {
    public var logValue: LogValue { .double(self) }
}

extension Int: LogValueConvertible {
    public var logValue: LogValue { .int(Int64(self)) }
}

extension Int32: LogValueConvertible {
    public var logValue: LogValue { .int(Int64(self)) }
}

extension Int64: LogValueConvertible {
    public var logValue: LogValue { .int(self) }
}

extension UInt16: LogValueConvertible {
    public var logValue: LogValue { .int(Int64(self)) }
}

extension UInt32: LogValueConvertible {
    public var logValue: LogValue { .int(Int64(self)) }
}

/// Counts and sizes past Int64's range (never met in practice) are written at its maximum.
extension UInt64: LogValueConvertible {
    public var logValue: LogValue { .int(Int64(clamping: self)) }
}

extension UInt: LogValueConvertible {
    public var logValue: LogValue { .int(Int64(clamping: self)) }
}
