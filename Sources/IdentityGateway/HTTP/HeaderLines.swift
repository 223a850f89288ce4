/// Every request header line in the order received, names in lower case. Collected in one pass
/// so that a header sent twice is seen twice: the framing checks need every `Content-Length`,
/// and `X-Forwarded-For` may arrive on several lines.
struct HeaderLines: Sendable {
    private(set) var lines: [(name: String, value: String)] = []

    init() {}

    init(_ pairs: [(String, String)]) {
        for (name, value) in pairs { append(name: name, value: value) }
    }

    mutating func append(name: String, value: String) {
        lines.append((name: Self.lowercasedASCII(name), value: value))
    }

    /// The values of every line with this (lower-case) name, in order.
    func values(_ name: String) -> [String] {
        lines.compactMap { $0.name == name ? $0.value : nil }
    }

    /// One value per name, repeated lines joined with ", " in order (RFC 9110 §5.3). A field
    /// that is not a list (an app key, a bearer token) sent twice thus reads as one invalid
    /// value rather than silently as the first or the last.
    var combined: [String: String] {
        var result: [String: String] = [:]
        for line in lines {
            if let earlier = result[line.name] {
                result[line.name] = earlier + ", " + line.value
            } else {
                result[line.name] = line.value
            }
        }
        return result
    }

    /// Header names are ASCII tokens; `lowercased()` would also fold non-ASCII letters.
    private static func lowercasedASCII(_ name: String) -> String {
        guard name.utf8.contains(where: { $0 >= 65 && $0 <= 90 }) else { return name }
        return String(decoding: name.utf8.map { $0 >= 65 && $0 <= 90 ? $0 + 32 : $0 }, as: UTF8.self)
    }
}

extension StringProtocol {
    /// Without leading and trailing spaces and tabs (HTTP's optional whitespace).
    var trimmingBlanks: SubSequence {
        let isBlank = { (c: Character) in c == " " || c == "\t" }
        guard let first = firstIndex(where: { !isBlank($0) }),
              let last = lastIndex(where: { !isBlank($0) }) else { return self[endIndex...] }
        return self[first...last]
    }
}
