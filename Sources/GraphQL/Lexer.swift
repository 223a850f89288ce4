/// Splits a document into tokens (GraphQL spec, section 2 "Language"): punctuators, names,
/// numbers, strings and block strings; whitespace, commas and comments are skipped.
struct Token: Sendable {
    enum Kind: Sendable, Equatable {
        case punctuator(String)
        case name(String)
        case int(String)
        case float(String)
        case string(String)
        case end
    }

    let kind: Kind
    let location: GraphQLError.Location
}

struct Lexer {
    private let scalars: [Unicode.Scalar]
    private var index = 0
    private var line = 1
    private var lineStart = 0

    init(_ source: String) {
        scalars = Array(source.unicodeScalars)
    }

    private func error(_ message: String, at position: Int? = nil) -> GraphQLError {
        GraphQLError("Syntax Error: " + message, code: GraphQLError.Code.parseFailed,
                     locations: [.init(line: line, column: (position ?? index) - lineStart + 1)])
    }

    private func peek(_ offset: Int = 0) -> Unicode.Scalar? {
        index + offset < scalars.count ? scalars[index + offset] : nil
    }

    mutating func next() throws -> Token {
        skipIgnored()
        let location = GraphQLError.Location(line: line, column: index - lineStart + 1)
        guard let scalar = peek() else { return Token(kind: .end, location: location) }
        switch scalar {
        case "!", "$", "&", "(", ")", ":", "=", "@", "[", "]", "{", "|", "}":
            index += 1
            return Token(kind: .punctuator(String(scalar)), location: location)
        case ".":
            guard peek(1) == ".", peek(2) == "." else { throw error("Unexpected \".\".") }
            index += 3
            return Token(kind: .punctuator("..."), location: location)
        case "\"":
            if peek(1) == "\"", peek(2) == "\"" { return Token(kind: .string(try blockString()), location: location) }
            return Token(kind: .string(try string()), location: location)
        case "-", "0"..."9":
            return Token(kind: try number(), location: location)
        default:
            if Self.isNameStart(scalar) {
                let start = index
                while let next = peek(), Self.isNameStart(next) || ("0"..."9").contains(next) { index += 1 }
                return Token(kind: .name(String(String.UnicodeScalarView(scalars[start..<index]))), location: location)
            }
            throw error("Unexpected character \(Self.describe(scalar)).")
        }
    }

    static func isNameStart(_ scalar: Unicode.Scalar) -> Bool {
        ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || scalar == "_"
    }

    static func describe(_ scalar: Unicode.Scalar) -> String {
        scalar.value < 0x20 || scalar.value > 0x7e ? hexCode(scalar.value) : "\"\(scalar)\""
    }

    private mutating func newline(afterIndex: Int) {
        line += 1
        lineStart = afterIndex
    }

    private mutating func skipIgnored() {
        while let scalar = peek() {
            switch scalar {
            case "\u{FEFF}", " ", "\t", ",":
                index += 1
            case "\n":
                index += 1
                newline(afterIndex: index)
            case "\r":
                index += 1
                if peek() == "\n" { index += 1 }
                newline(afterIndex: index)
            case "#":
                while let next = peek(), next != "\n", next != "\r" { index += 1 }
            default:
                return
            }
        }
    }

    private mutating func number() throws -> Token.Kind {
        let start = index
        var isFloat = false
        if peek() == "-" { index += 1 }
        guard let first = peek(), ("0"..."9").contains(first) else { throw error("Invalid number, expected digit.") }
        index += 1
        if first == "0", let next = peek(), ("0"..."9").contains(next) {
            throw error("Invalid number, unexpected digit after 0.")
        }
        digits()
        if peek() == "." {
            isFloat = true
            index += 1
            guard let next = peek(), ("0"..."9").contains(next) else { throw error("Invalid number, expected digit.") }
            digits()
        }
        if peek() == "e" || peek() == "E" {
            isFloat = true
            index += 1
            if peek() == "+" || peek() == "-" { index += 1 }
            guard let next = peek(), ("0"..."9").contains(next) else { throw error("Invalid number, expected digit.") }
            digits()
        }
        if let next = peek(), next == "." || Self.isNameStart(next) {
            throw error("Invalid number, expected digit but got \(Self.describe(next)).")
        }
        let text = String(String.UnicodeScalarView(scalars[start..<index]))
        return isFloat ? .float(text) : .int(text)
    }

    private mutating func digits() {
        while let next = peek(), ("0"..."9").contains(next) { index += 1 }
    }

    private mutating func string() throws -> String {
        index += 1
        var out = String.UnicodeScalarView()
        while let scalar = peek() {
            switch scalar {
            case "\"":
                index += 1
                return String(out)
            case "\n", "\r":
                throw error("Unterminated string.")
            case "\\":
                index += 1
                guard let escaped = peek() else { throw error("Unterminated string.") }
                index += 1
                switch escaped {
                case "\"": out.append("\"")
                case "\\": out.append("\\")
                case "/": out.append("/")
                case "b": out.append("\u{8}")
                case "f": out.append("\u{C}")
                case "n": out.append("\n")
                case "r": out.append("\r")
                case "t": out.append("\t")
                case "u": out.append(try unicodeEscape())
                default: throw error("Invalid character escape sequence.", at: index - 2)
                }
            default:
                if scalar.value < 0x20 && scalar != "\t" { throw error("Invalid character within String: \(Self.describe(scalar)).") }
                out.append(scalar)
                index += 1
            }
        }
        throw error("Unterminated string.")
    }

    private mutating func hex4() throws -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let scalar = peek(), let digit = Int(String(scalar), radix: 16) else {
                throw error("Invalid Unicode escape sequence.")
            }
            value = value * 16 + UInt32(digit)
            index += 1
        }
        return value
    }

    /// `\uXXXX` (a surrogate pair as two escapes) or `\u{X…}`.
    private mutating func unicodeEscape() throws -> Unicode.Scalar {
        if peek() == "{" {
            index += 1
            var value: UInt32 = 0
            var count = 0
            while let scalar = peek(), scalar != "}" {
                guard let digit = Int(String(scalar), radix: 16), count < 8 else { throw error("Invalid Unicode escape sequence.") }
                value = value &* 16 &+ UInt32(digit)
                count += 1
                index += 1
            }
            guard peek() == "}", count > 0, let scalar = Unicode.Scalar(value) else { throw error("Invalid Unicode escape sequence.") }
            index += 1
            return scalar
        }
        let first = try hex4()
        if (0xD800...0xDBFF).contains(first) {
            guard peek() == "\\", peek(1) == "u" else { throw error("Invalid Unicode escape sequence.") }
            index += 2
            let second = try hex4()
            guard (0xDC00...0xDFFF).contains(second),
                  let scalar = Unicode.Scalar(0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)) else {
                throw error("Invalid Unicode escape sequence.")
            }
            return scalar
        }
        guard let scalar = Unicode.Scalar(first) else { throw error("Invalid Unicode escape sequence.") }
        return scalar
    }

    /// `"""…"""`: raw text with `\"""` as the only escape, then the spec's BlockStringValue
    /// (common indentation and blank first/last lines removed).
    private mutating func blockString() throws -> String {
        index += 3
        var raw = String.UnicodeScalarView()
        while let scalar = peek() {
            if scalar == "\"", peek(1) == "\"", peek(2) == "\"" {
                index += 3
                return Self.blockStringValue(String(raw))
            }
            if scalar == "\\", peek(1) == "\"", peek(2) == "\"", peek(3) == "\"" {
                raw.append(contentsOf: "\"\"\"".unicodeScalars)
                index += 4
                continue
            }
            if scalar.value < 0x20 && scalar != "\t" && scalar != "\n" && scalar != "\r" {
                throw error("Invalid character within String: \(Self.describe(scalar)).")
            }
            if scalar == "\n" {
                index += 1
                newline(afterIndex: index)
            } else if scalar == "\r" {
                index += 1
                if peek() == "\n" { raw.append("\r"); index += 1 }
                newline(afterIndex: index)
            } else {
                index += 1
            }
            raw.append(scalar)
        }
        throw error("Unterminated string.")
    }

    static func blockStringValue(_ raw: String) -> String {
        let normalized = raw.replacingCRLF()
        var lines = normalized.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var common: Int?
        for line in lines.dropFirst() {
            let indent = line.prefix { $0 == " " || $0 == "\t" }.count
            if indent < line.count, common == nil || indent < common! { common = indent }
        }
        if let common {
            for index in lines.indices.dropFirst() { lines[index] = String(lines[index].dropFirst(common)) }
        }
        while let first = lines.first, first.allSatisfy({ $0 == " " || $0 == "\t" }) { lines.removeFirst() }
        while let last = lines.last, last.allSatisfy({ $0 == " " || $0 == "\t" }) { lines.removeLast() }
        return lines.joined(separator: "\n")
    }
}

extension String {
    fileprivate func replacingCRLF() -> String {
        var out = String.UnicodeScalarView()
        var previousCR = false
        for scalar in unicodeScalars {
            if scalar == "\r" { out.append("\n"); previousCR = true; continue }
            if scalar == "\n" && previousCR { previousCR = false; continue }
            previousCR = false
            out.append(scalar)
        }
        return String(out)
    }
}

/// `U+000A` for a character that would not print.
func hexCode(_ value: UInt32) -> String {
    let hex = String(value, radix: 16, uppercase: true)
    return "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
}
