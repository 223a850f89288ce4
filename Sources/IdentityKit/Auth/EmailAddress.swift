/// A deliberately plain email check: one `@`, a non-empty local part, a dotted domain, no
/// spaces or control characters, at most 254 characters. Deliverability is proved by codes.
public enum EmailAddress {
    public static func isValid(_ email: String) -> Bool {
        guard email.utf8.count <= 254, !email.contains(where: { $0.isWhitespace || $0.asciiValue.map { $0 < 32 } == true })
        else { return false }
        let parts = email.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, parts[0].count <= 64 else { return false }
        let labels = parts[1].split(separator: ".", omittingEmptySubsequences: false)
        return labels.count >= 2 && labels.allSatisfy { !$0.isEmpty && !$0.hasPrefix("-") && !$0.hasSuffix("-") }
            && labels.last.map { $0.count >= 2 } == true
    }
}
