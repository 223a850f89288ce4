import Foundation

// Why a parser of our own rather than Foundation's (issue 10, "JSON"). CPU time of one parse
// of hostile bodies just under 64 KiB, release build on these 2-core machines, best of 5:
//
//                                     old JSONDecoder   JSONSerialization   this parser
//                                     `try?` cascade    + to JSONValue
//   64 arrays nested 511 deep           91,811 ms           8.0 ms          0.001 ms (depth)
//   1,040 arrays nested 32 deep            583 ms           8.5 ms          1.3 ms
//   8,189 small objects [{"a":1},…]         41 ms            27 ms          1.0 ms
//   16,848 small numbers                    14 ms            18 ms          0.25 ms
//   5,210 distinct keys                    8.0 ms           7.7 ms          0.7 ms
//   64 KiB of \" escapes                   1.9 ms           5.0 ms          0.15 ms
//   arrays nested 32,767 deep             0.02 ms          0.03 ms          0.001 ms (all refuse)
//
// - The old cascade decoded each level once per type it tried, so its cost grew steeply with
//   depth (1.2 s for 500 nested arrays in 1 KB); only JSONDecoder's own limit of 512 kept
//   the deepest bodies cheap.
// - JSONSerialization is linear, but goes over the 5 ms budget on several of these bodies
//   before any conversion, allows 512 levels, and cannot refuse what must be refused: on
//   Linux it keeps the last of two duplicate keys silently, takes `[1,]`, and hands back
//   `true` and `1` as NSNumbers that both cast to Bool, so a conversion must guess types. A
//   pre-scan for depth would be easy; a pre-scan for duplicate keys is a parser already.
// - This parser stayed at or under 1.3 ms on all 28 bodies tried (2 ms while other builds
//   shared the cores; refusing past depth 32 after reading 33 bytes), and every rule in it
//   is RFC 8259's.
//
// It is linear in the input: every byte is looked at a bounded number of times, the recursion
// is at most `maximumDepth` deep (checked before descending), keys go into Swift dictionaries
// whose hashing is seeded per process (no collision flooding), integers below 10^15 are
// converted without text, and other numbers go through the standard library's correctly
// rounded conversion (0.16 ms for one 65,000-digit number).

/// A strict RFC 8259 parser over UTF-8 bytes, producing `JSONValue`, for everything that
/// arrives from outside: request bodies, id-token headers and payloads, access tokens.
///
/// Refused: more bytes than `maximumBytes`, nesting deeper than `maximumDepth` (`[[1]]` is
/// depth 2), trailing commas, leading zeros, `NaN`/`Infinity`, numbers that overflow to
/// infinity, unescaped control characters in strings, unknown escapes, lone surrogates
/// (escaped or encoded) and invalid UTF-8 (`invalidUnicode`, once the rest is well-formed), whitespace other than space, tab, CR and LF, anything
/// after the value, and a key repeated in one object: different layers (this service, a
/// database's JSON type, an app's backend) would each keep a different one of the two.
public struct JSONParser {
    /// The deepest nesting accepted unless the caller says otherwise.
    public static let defaultMaximumDepth = 32
    /// The largest document accepted unless the caller says otherwise: the gateway's body cap.
    public static let defaultMaximumBytes = 64 * 1024

    /// Why a document was refused; `offset` is the byte where the parser stopped.
    public enum Failure: Error, Equatable, Sendable {
        case tooLarge
        case tooDeep(offset: Int)
        case unexpectedEnd
        case unexpectedByte(offset: Int)
        case invalidNumber(offset: Int)
        case invalidString(offset: Int)
        /// Well-formed JSON around a string that is not Unicode text: invalid UTF-8 or a lone
        /// surrogate. Told apart so the gateway answers 422 for the field rather than 400.
        case invalidUnicode(offset: Int)
        case duplicateKey(offset: Int)
    }

    public static func parse(_ data: Data, maximumBytes: Int = defaultMaximumBytes,
                      maximumDepth: Int = defaultMaximumDepth) throws(Failure) -> JSONValue {
        guard data.count <= maximumBytes else { throw .tooLarge }
        return try data.withUnsafeBytes { parse($0.assumingMemoryBound(to: UInt8.self), maximumDepth: maximumDepth) }.get()
    }

    public static func parse(_ bytes: [UInt8], maximumBytes: Int = defaultMaximumBytes,
                      maximumDepth: Int = defaultMaximumDepth) throws(Failure) -> JSONValue {
        guard bytes.count <= maximumBytes else { throw .tooLarge }
        return try bytes.withUnsafeBufferPointer { parse($0, maximumDepth: maximumDepth) }.get()
    }

    /// A `Result`, as `withUnsafeBytes` would turn a typed error into `any Error`.
    private static func parse(_ bytes: UnsafeBufferPointer<UInt8>, maximumDepth: Int) -> Result<JSONValue, Failure> {
        var parser = JSONParser(bytes: bytes, maximumDepth: maximumDepth)
        return Result { () throws(Failure) -> JSONValue in try parser.document() }
    }

    // Only used inside `parse`, within the lifetime of the caller's buffer.
    private let bytes: UnsafeBufferPointer<UInt8>
    private let maximumDepth: Int
    private var position = 0
    /// Escaped strings are decoded here.
    private var scratch: [UInt8] = []
    /// The first string that was not Unicode text. Parsing goes on (with U+FFFD in its place),
    /// so a document that is also malformed elsewhere is still refused as malformed.
    private var firstInvalidUnicode: Int?

    private init(bytes: UnsafeBufferPointer<UInt8>, maximumDepth: Int) {
        self.bytes = bytes
        self.maximumDepth = maximumDepth
    }

    private mutating func document() throws(Failure) -> JSONValue {
        skipWhitespace()
        let value = try value(depth: 0)
        skipWhitespace()
        guard position == bytes.count else { throw .unexpectedByte(offset: position) }
        if let offset = firstInvalidUnicode { throw .invalidUnicode(offset: offset) }
        return value
    }

    private mutating func notUnicode(at offset: Int) {
        if firstInvalidUnicode == nil { firstInvalidUnicode = offset }
    }

    /// A value starting at `position`; `depth` is the number of containers around it.
    private mutating func value(depth: Int) throws(Failure) -> JSONValue {
        guard position < bytes.count else { throw .unexpectedEnd }
        switch bytes[position] {
        case Byte.openBrace: return try object(depth: depth + 1)
        case Byte.openBracket: return try array(depth: depth + 1)
        case Byte.quote: return .string(try string())
        case Byte.t: try literal("true"); return .bool(true)
        case Byte.f: try literal("false"); return .bool(false)
        case Byte.n: try literal("null"); return .null
        case Byte.minus, Byte.zero...Byte.nine: return .number(try number())
        default: throw .unexpectedByte(offset: position)
        }
    }

    private mutating func array(depth: Int) throws(Failure) -> JSONValue {
        guard depth <= maximumDepth else { throw .tooDeep(offset: position) }
        position += 1
        var values: [JSONValue] = []
        skipWhitespace()
        if position < bytes.count, bytes[position] == Byte.closeBracket {
            position += 1
            return .array(values)
        }
        while true {
            skipWhitespace()
            values.append(try value(depth: depth))
            skipWhitespace()
            guard position < bytes.count else { throw .unexpectedEnd }
            switch bytes[position] {
            case Byte.comma: position += 1
            case Byte.closeBracket:
                position += 1
                return .array(values)
            default: throw .unexpectedByte(offset: position)
            }
        }
    }

    private mutating func object(depth: Int) throws(Failure) -> JSONValue {
        guard depth <= maximumDepth else { throw .tooDeep(offset: position) }
        position += 1
        var members: [String: JSONValue] = [:]
        skipWhitespace()
        if position < bytes.count, bytes[position] == Byte.closeBrace {
            position += 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard position < bytes.count else { throw .unexpectedEnd }
            guard bytes[position] == Byte.quote else { throw .unexpectedByte(offset: position) }
            let keyOffset = position
            let key = try string()
            skipWhitespace()
            guard position < bytes.count else { throw .unexpectedEnd }
            guard bytes[position] == Byte.colon else { throw .unexpectedByte(offset: position) }
            position += 1
            skipWhitespace()
            // One hash per key. Swift compares strings by canonical equivalence, so "é"
            // precomposed and "e" + U+0301 count as one key here: refused too, as another
            // layer would see two.
            guard members.updateValue(try value(depth: depth), forKey: key) == nil else {
                throw .duplicateKey(offset: keyOffset)
            }
            skipWhitespace()
            guard position < bytes.count else { throw .unexpectedEnd }
            switch bytes[position] {
            case Byte.comma: position += 1
            case Byte.closeBrace:
                position += 1
                return .object(members)
            default: throw .unexpectedByte(offset: position)
            }
        }
    }

    /// A string starting at the opening quote. Strings without escapes (nearly all of them)
    /// are checked and made straight from the input; the rest are decoded into `scratch`.
    private mutating func string() throws(Failure) -> String {
        position += 1
        let start = position
        var orOfBytes: UInt8 = 0  // its top bit is set once any byte is not ASCII
        while position < bytes.count {
            let byte = bytes[position]
            if byte == Byte.quote {
                let run = UnsafeBufferPointer(rebasing: bytes[start..<position])
                position += 1
                if orOfBytes & 0x80 != 0, !Self.isValidUTF8(run) { notUnicode(at: start) }
                return String(decoding: run, as: UTF8.self)
            }
            if byte == Byte.backslash { break }
            guard byte >= 0x20 else { throw .invalidString(offset: position) }
            orOfBytes |= byte
            position += 1
        }
        guard position < bytes.count else { throw .unexpectedEnd }
        // One scratch buffer for the whole document: no allocation per escaped string.
        scratch.removeAll(keepingCapacity: true)
        scratch.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<position]))
        while position < bytes.count {
            let byte = bytes[position]
            switch byte {
            case Byte.quote:
                position += 1
                // Escapes only ever add whole UTF-8 sequences, so checking the decoded buffer
                // checks every raw run between them too.
                let valid = scratch.withUnsafeBufferPointer { Self.isValidUTF8($0) }
                if !valid { notUnicode(at: start) }
                return String(decoding: scratch, as: UTF8.self)
            case Byte.backslash:
                try escape()
            case 0..<0x20:
                throw .invalidString(offset: position)
            default:
                scratch.append(byte)
                position += 1
            }
        }
        throw .unexpectedEnd
    }

    /// Strict UTF-8 (RFC 3629): no overlong forms, no encoded surrogates, nothing past
    /// U+10FFFF, no truncated sequences. `String(decoding:)` would repair these silently;
    /// the standard library's validating initializer refuses them too but, being generic,
    /// costs more than parsing a short string.
    static func isValidUTF8(_ utf8: UnsafeBufferPointer<UInt8>) -> Bool {
        var index = 0
        let count = utf8.count
        func continuation(_ offset: Int, _ range: ClosedRange<UInt8> = 0x80...0xBF) -> Bool {
            index + offset < count && range.contains(utf8[index + offset])
        }
        while index < count {
            let lead = utf8[index]
            switch lead {
            case 0x00...0x7F:
                index += 1
            case 0xC2...0xDF:
                guard continuation(1) else { return false }
                index += 2
            case 0xE0...0xEF:
                let second: ClosedRange<UInt8> = lead == 0xE0 ? 0xA0...0xBF : lead == 0xED ? 0x80...0x9F : 0x80...0xBF
                guard continuation(1, second), continuation(2) else { return false }
                index += 3
            case 0xF0...0xF4:
                let second: ClosedRange<UInt8> = lead == 0xF0 ? 0x90...0xBF : lead == 0xF4 ? 0x80...0x8F : 0x80...0xBF
                guard continuation(1, second), continuation(2), continuation(3) else { return false }
                index += 4
            default:
                return false
            }
        }
        return true
    }

    /// One escape starting at the backslash, appended to `scratch` as UTF-8.
    private mutating func escape() throws(Failure) {
        let escapeOffset = position
        guard position + 1 < bytes.count else { throw .unexpectedEnd }
        let letter = bytes[position + 1]
        position += 2
        switch letter {
        case Byte.quote, Byte.backslash, Byte.slash: scratch.append(letter)
        case Byte.b: scratch.append(0x08)
        case Byte.f: scratch.append(0x0C)
        case Byte.n: scratch.append(0x0A)
        case Byte.r: scratch.append(0x0D)
        case Byte.t: scratch.append(0x09)
        case Byte.u:
            let unit = try hex4()
            var scalarValue = UInt32(unit)
            if (0xD800...0xDBFF).contains(unit) {
                // A high surrogate must be followed at once by an escaped low one.
                if position + 1 < bytes.count, bytes[position] == Byte.backslash, bytes[position + 1] == Byte.u {
                    position += 2
                    let low = try hex4()
                    if (0xDC00...0xDFFF).contains(low) {
                        scalarValue = 0x10000 + ((UInt32(unit) - 0xD800) << 10) + (UInt32(low) - 0xDC00)
                    } else {
                        notUnicode(at: escapeOffset)
                        scalarValue = 0xFFFD
                    }
                } else {
                    notUnicode(at: escapeOffset)
                    scalarValue = 0xFFFD
                }
            } else if (0xDC00...0xDFFF).contains(unit) {
                notUnicode(at: escapeOffset)
                scalarValue = 0xFFFD
            }
            let scalar = Unicode.Scalar(scalarValue) ?? "\u{FFFD}"
            scratch.append(contentsOf: scalar.utf8)
        default:
            throw .invalidString(offset: escapeOffset)
        }
    }

    /// Four hex digits after `\u`.
    private mutating func hex4() throws(Failure) -> UInt16 {
        guard position + 4 <= bytes.count else { throw .unexpectedEnd }
        var unit: UInt16 = 0
        for _ in 0..<4 {
            let byte = bytes[position]
            let digit: UInt8
            switch byte {
            case Byte.zero...Byte.nine: digit = byte - Byte.zero
            case Byte.lowerA...Byte.f: digit = byte - Byte.lowerA + 10
            case Byte.upperA...Byte.upperF: digit = byte - Byte.upperA + 10
            default: throw .invalidString(offset: position)
            }
            unit = unit << 4 | UInt16(digit)
            position += 1
        }
        return unit
    }

    /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?` as a finite Double.
    private mutating func number() throws(Failure) -> Double {
        let start = position
        var negative = false
        if bytes[position] == Byte.minus {
            negative = true
            position += 1
        }
        guard position < bytes.count, isDigit(bytes[position]) else { throw .invalidNumber(offset: start) }
        if bytes[position] == Byte.zero {
            position += 1
            if position < bytes.count, isDigit(bytes[position]) { throw .invalidNumber(offset: start) }
        } else {
            skipDigits()
        }
        let integerEnd = position
        if position < bytes.count, bytes[position] == Byte.dot {
            position += 1
            guard position < bytes.count, isDigit(bytes[position]) else { throw .invalidNumber(offset: start) }
            skipDigits()
        }
        if position < bytes.count, bytes[position] == Byte.e || bytes[position] == Byte.upperE {
            position += 1
            if position < bytes.count, bytes[position] == Byte.plus || bytes[position] == Byte.minus { position += 1 }
            guard position < bytes.count, isDigit(bytes[position]) else { throw .invalidNumber(offset: start) }
            skipDigits()
        }
        let digitsStart = negative ? start + 1 : start
        if integerEnd == position, position - digitsStart <= 15 {
            // Below 10^15 every integer is exactly a Double: no text conversion needed.
            var magnitude: Int64 = 0
            for index in digitsStart..<position { magnitude = magnitude * 10 + Int64(bytes[index] - Byte.zero) }
            return negative ? -Double(magnitude) : Double(magnitude)
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
        guard let value = Double(text), value.isFinite else { throw .invalidNumber(offset: start) }
        return value
    }

    private mutating func skipDigits() {
        while position < bytes.count, isDigit(bytes[position]) { position += 1 }
    }

    private func isDigit(_ byte: UInt8) -> Bool { byte >= Byte.zero && byte <= Byte.nine }

    private mutating func literal(_ word: StaticString) throws(Failure) {
        let count = word.utf8CodeUnitCount
        guard position + count <= bytes.count else { throw .unexpectedEnd }
        for index in 0..<count where bytes[position + index] != word.utf8Start[index] {
            throw .unexpectedByte(offset: position + index)
        }
        position += count
    }

    /// RFC 8259 whitespace: space, tab, LF, CR; nothing else (no BOM, no NBSP).
    private mutating func skipWhitespace() {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x09, 0x0A, 0x0D: position += 1
            default: return
            }
        }
    }

    private enum Byte {
        static let openBrace = UInt8(ascii: "{"), closeBrace = UInt8(ascii: "}")
        static let openBracket = UInt8(ascii: "["), closeBracket = UInt8(ascii: "]")
        static let quote = UInt8(ascii: "\""), backslash = UInt8(ascii: "\\"), slash = UInt8(ascii: "/")
        static let comma = UInt8(ascii: ","), colon = UInt8(ascii: ":"), dot = UInt8(ascii: ".")
        static let minus = UInt8(ascii: "-"), plus = UInt8(ascii: "+")
        static let zero = UInt8(ascii: "0"), nine = UInt8(ascii: "9")
        static let lowerA = UInt8(ascii: "a"), upperA = UInt8(ascii: "A"), upperF = UInt8(ascii: "F")
        static let b = UInt8(ascii: "b"), f = UInt8(ascii: "f"), n = UInt8(ascii: "n"), r = UInt8(ascii: "r")
        static let t = UInt8(ascii: "t"), u = UInt8(ascii: "u"), e = UInt8(ascii: "e"), upperE = UInt8(ascii: "E")
    }
}
