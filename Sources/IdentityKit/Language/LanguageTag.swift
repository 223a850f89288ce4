import Foundation

/// BCP 47 language tags (RFC 5646) as this service stores and compares them: the syntax of
/// `language[-script][-region][-variant…]`, in the canonical case (`pt-BR`, `zh-Hant-TW`,
/// `sr-Latn`) with a primary language of 2 or 3 letters, at most 35 characters (the length RFC 5646 asks every implementation to keep).
/// Whether a language has texts is the mailer's business (`MessageLanguage`); any well-formed
/// tag may be a user's `locale`.
public enum LanguageTag {
    public static let maximumLength = 35
    /// What a field that wants a tag says of one that is not (the gateway's body rule, the
    /// worker's own check, the app's `default_locale`).
    public static let rule = "must be a BCP 47 language tag such as de or pt-BR"

    /// The tag in canonical case, or nil when it is not well formed (`pt_BR`, `english`, `e`).
    public static func normalized(_ raw: String) -> String? {
        guard !raw.isEmpty, raw.utf8.count <= maximumLength else { return nil }
        let subtags = raw.split(separator: "-", omittingEmptySubsequences: false)
        // The primary language: 2 or 3 letters (ISO 639). BCP 47 reserves 4 and allows registered
        // 5 to 8, but none is registered, and `english` is a mistake worth a 422.
        guard let language = subtags.first, (2...3).contains(language.count), language.allSatisfy(isLetter) else { return nil }
        var out = [language.lowercased()]
        for (index, subtag) in subtags.dropFirst().enumerated() {
            guard (1...8).contains(subtag.count), subtag.allSatisfy({ isLetter($0) || isDigit($0) }) else { return nil }
            let position = index + 1
            if subtag.count == 4, subtag.allSatisfy(isLetter), position == 1 {
                out.append(subtag.prefix(1).uppercased() + subtag.dropFirst().lowercased())  // script
            } else if (subtag.count == 2 && subtag.allSatisfy(isLetter)) || (subtag.count == 3 && subtag.allSatisfy(isDigit)) {
                out.append(subtag.uppercased())  // region
            } else {
                out.append(subtag.lowercased())
            }
        }
        return out.joined(separator: "-")
    }

    /// The tag, then each shorter prefix of it: `zh-Hant-TW`, `zh-Hant`, `zh` (RFC 4647's lookup).
    public static func fallbacks(_ tag: String) -> [String] {
        var parts = tag.split(separator: "-").map(String.init)
        var out: [String] = []
        while !parts.isEmpty {
            out.append(parts.joined(separator: "-"))
            parts.removeLast()
        }
        return out
    }

    /// The primary language subtag: `pt` of `pt-BR`.
    public static func primary(_ tag: String) -> String {
        String(tag.prefix { $0 != "-" })
    }

    private static func isLetter(_ c: Character) -> Bool { c.isASCII && c.isLetter }
    private static func isDigit(_ c: Character) -> Bool { c.isASCII && c.isNumber }
}

/// The languages of an `Accept-Language` header (RFC 9110 §12.5.4), best first: well-formed
/// tags only, `q=0` and `*` left out, at most `limit` of them, the header read up to 1 KiB (a
/// client's preferences are a handful; the rest of a hostile header costs nothing).
public enum AcceptLanguage {
    public static func parse(_ header: String, limit: Int = 6) -> [String] {
        var ranked: [(tag: String, q: Double, order: Int)] = []
        for (order, item) in header.utf8.prefix(1024).split(separator: UInt8(ascii: ",")).enumerated() {
            let fields = String(decoding: item, as: UTF8.self).split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            guard let first = fields.first, let tag = LanguageTag.normalized(first) else { continue }
            var q = 1.0
            for parameter in fields.dropFirst() where parameter.lowercased().hasPrefix("q=") {
                q = Double(parameter.dropFirst(2)) ?? 0
            }
            guard q > 0, q <= 1, !ranked.contains(where: { $0.tag == tag }) else { continue }
            ranked.append((tag, q, order))
        }
        return ranked.sorted { $0.q != $1.q ? $0.q > $1.q : $0.order < $1.order }.prefix(limit).map(\.tag)
    }
}
