/// An IPv4 or IPv6 address parsed from text: a socket peer, an `X-Forwarded-For` hop or the
/// address part of a trusted-proxy range. Parsed in Swift rather than with `inet_pton` so the
/// client-address rules stay pure and testable; the grammar is the strict one (no leading
/// zeros in IPv4, which `inet_aton` would read as octal; no zone ids; no ports).
struct IPAddress: Hashable, Sendable, CustomStringConvertible {
    enum Family: Sendable { case v4, v6 }

    let family: Family
    /// The address bits; an IPv4 address uses the low 32.
    let bits: UInt128

    var bitWidth: Int { family == .v4 ? 32 : 128 }

    private init(family: Family, bits: UInt128) {
        self.family = family
        self.bits = bits
    }

    init(v4 bits: UInt32) {
        self.init(family: .v4, bits: UInt128(bits))
    }

    /// An IPv6 address; an IPv4-mapped one (`::ffff:a.b.c.d`) becomes the IPv4 address, so a
    /// dual-stack peer matches the IPv4 ranges an operator writes.
    init(v6 bits: UInt128) {
        if bits >> 32 == 0xffff {
            self.init(v4: UInt32(truncatingIfNeeded: bits))
        } else {
            self.init(family: .v6, bits: bits)
        }
    }

    init?(_ text: some StringProtocol) {
        let utf8 = Array(text.utf8)
        if utf8.contains(UInt8(ascii: ":")) {
            guard let bits = Self.parseV6(utf8[...]) else { return nil }
            self.init(v6: bits)
        } else {
            guard let bits = Self.parseV4(utf8[...]) else { return nil }
            self.init(v4: bits)
        }
    }

    /// Dotted quad, or RFC 5952 text for IPv6 (lower case, longest zero run as `::`).
    var description: String {
        if family == .v4 {
            let value = UInt32(truncatingIfNeeded: bits)
            return (0..<4).map { String((value >> (24 - 8 * UInt32($0))) & 0xff) }.joined(separator: ".")
        }
        let groups = (0..<8).map { UInt16(truncatingIfNeeded: bits >> (112 - 16 * UInt128($0))) }
        // The longest run of two or more zero groups (the first one on a tie) becomes "::".
        var bestStart = -1, bestLength = 0, runStart = -1
        for index in 0...8 {
            if index < 8, groups[index] == 0 {
                if runStart < 0 { runStart = index }
            } else if runStart >= 0 {
                if index - runStart > bestLength { bestStart = runStart; bestLength = index - runStart }
                runStart = -1
            }
        }
        let hex = { (range: Range<Int>) in groups[range].map { String($0, radix: 16) }.joined(separator: ":") }
        guard bestLength >= 2 else { return hex(0..<8) }
        return hex(0..<bestStart) + "::" + hex((bestStart + bestLength)..<8)
    }

    // MARK: - Parsing

    private static func parseV4(_ text: ArraySlice<UInt8>) -> UInt32? {
        let parts = text.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var value: UInt32 = 0
        for part in parts {
            guard (1...3).contains(part.count), part.allSatisfy(isDigit),
                  part.count == 1 || part.first != UInt8(ascii: "0") else { return nil }
            let octet = part.reduce(0) { $0 * 10 + UInt32($1 - UInt8(ascii: "0")) }
            guard octet <= 255 else { return nil }
            value = value << 8 | octet
        }
        return value
    }

    private static func parseV6(_ text: ArraySlice<UInt8>) -> UInt128? {
        // At most one "::"; the groups before and after it, the gap filled with zeros.
        let colon = UInt8(ascii: ":")
        var head = text[...], tail = text[text.endIndex...]
        var compressed = false
        if let gap = text.indices.first(where: { $0 + 1 < text.endIndex && text[$0] == colon && text[$0 + 1] == colon }) {
            head = text[text.startIndex..<gap]
            tail = text[(gap + 2)...]
            compressed = true
        }
        // A dotted quad may only end the whole address (mapped or translated addresses).
        guard let headGroups = groups(head, dottedTailAllowed: !compressed),
              let tailGroups = groups(tail, dottedTailAllowed: true) else { return nil }
        let count = headGroups.count + tailGroups.count
        guard compressed ? count <= 7 : count == 8 else { return nil }
        let all = headGroups + Array(repeating: 0, count: 8 - count) + tailGroups
        return all.reduce(UInt128(0)) { $0 << 16 | UInt128($1) }
    }

    /// The 16-bit groups of one side of "::": hex groups of 1–4 digits, the last one possibly
    /// a dotted quad (two groups). Nil when malformed.
    private static func groups(_ text: ArraySlice<UInt8>, dottedTailAllowed: Bool) -> [UInt16]? {
        if text.isEmpty { return [] }
        let parts = text.split(separator: UInt8(ascii: ":"), omittingEmptySubsequences: false)
        var result: [UInt16] = []
        for (index, part) in parts.enumerated() {
            if dottedTailAllowed, index == parts.count - 1, part.contains(UInt8(ascii: ".")) {
                guard let v4 = parseV4(part) else { return nil }
                result += [UInt16(v4 >> 16), UInt16(v4 & 0xffff)]
                continue
            }
            guard (1...4).contains(part.count), part.allSatisfy(isHexDigit) else { return nil }
            result.append(part.reduce(0) { $0 << 4 | UInt16(hexValue($1)) })
        }
        return result
    }

    private static func isDigit(_ c: UInt8) -> Bool { c >= 48 && c <= 57 }

    private static func isHexDigit(_ c: UInt8) -> Bool {
        isDigit(c) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102)
    }

    private static func hexValue(_ c: UInt8) -> UInt8 {
        isDigit(c) ? c - 48 : (c | 0x20) - 87
    }
}
