/// How many segments an SMS text takes (3GPP TS 23.038 and 23.040): GSM-7 when every
/// character is in the default alphabet or its extension table (an extension character costs
/// two septets, its escape and itself), else UCS-2 (UTF-16 code units). One segment holds 160
/// septets or 70 units; a longer text is split into parts of 153 or 67, the rest going to the
/// concatenation header, and an escape pair or a surrogate pair is never split across parts.
struct SmsSegments: Sendable, Equatable {
    enum Encoding: String, Sendable { case gsm7, ucs2 }

    let encoding: Encoding
    let count: Int
}

extension SmsSegments {
    init(_ text: String) {
        if let septets = Self.gsm7Septets(text) {
            encoding = .gsm7
            count = Self.segments(units: septets, single: 160, part: 153)
        } else {
            encoding = .ucs2
            count = Self.segments(units: text.unicodeScalars.map { $0.value > 0xFFFF ? 2 : 1 }, single: 70, part: 67)
        }
    }

    /// The cost in septets of each character, or nil when one is not in GSM-7.
    private static func gsm7Septets(_ text: String) -> [Int]? {
        var out: [Int] = []
        for scalar in text.unicodeScalars {
            if basic.contains(scalar) { out.append(1) } else if extended.contains(scalar) { out.append(2) } else { return nil }
        }
        return out
    }

    /// Parts filled greedily, a unit (a character's septets or code units) never split.
    private static func segments(units: [Int], single: Int, part: Int) -> Int {
        let total = units.reduce(0, +)
        if total <= single { return total == 0 ? 0 : 1 }
        var count = 1
        var used = 0
        for unit in units {
            if used + unit > part {
                count += 1
                used = 0
            }
            used += unit
        }
        return count
    }

    /// The GSM 03.38 default alphabet.
    private static let basic: Set<Unicode.Scalar> = Set(
        ("@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !\"#¤%&'()*+,-./0123456789:;<=>?"
         + "¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà").unicodeScalars)
    /// Its extension table: each is sent as the escape and one more septet.
    private static let extended: Set<Unicode.Scalar> = Set("^{}\\[~]|€\u{0C}".unicodeScalars)
}
