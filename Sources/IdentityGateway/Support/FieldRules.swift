import Foundation
import IdentityKit

/// Field rules shared by sign-up and PATCH /v1/me.
enum FieldRules {
    /// 3–32 of `[A-Za-z0-9_.]`.
    static func username(_ value: String) -> String? {
        let ok = (3...32).contains(value.utf8.count) && value.utf8.allSatisfy {
            ($0 >= 48 && $0 <= 57) || ($0 >= 65 && $0 <= 90) || ($0 >= 97 && $0 <= 122) || $0 == 95 || $0 == 46
        }
        return ok ? nil : "must be 3 to 32 letters, digits, '_' or '.'"
    }

    /// A guest secret is the only credential of a guest account: 32–256 characters that look random
    /// (docs/api-contract.md, "Sign-in methods", asks for 256 random bits, 43 base64url
    /// characters). Its shortest repeating block (the whole secret unless it is a block repeated)
    /// must use 8 or more distinct characters and be worth 100 bits by a per-character estimate
    /// (length × log2 of the characters used; 32 hex digits pass, `abcd…abcd` or one character
    /// repeated do not).
    static func guestSecret(_ value: String) -> String? {
        let scalars = Array(value.unicodeScalars)
        guard (32...256).contains(scalars.count) else { return "must be 32 to 256 characters" }
        let block = scalars.prefix(shortestPeriod(scalars))
        let distinct = Set(block).count
        let bits = Double(block.count) * log2(Double(max(distinct, 1)))
        guard distinct >= 8, bits >= 100 else {
            return "must be random: 32 or more characters from a large alphabet (256 random bits as base64url)"
        }
        return nil
    }

    /// The length of the shortest block the text repeats (`abcabcab` → 3), or its whole length.
    private static func shortestPeriod(_ scalars: [Unicode.Scalar]) -> Int {
        guard scalars.count > 1 else { return scalars.count }
        for period in 1...(scalars.count / 2) where (period..<scalars.count).allSatisfy({ scalars[$0] == scalars[$0 - period] }) {
            return period
        }
        return scalars.count
    }

    /// A BCP 47 language tag (`pt-BR`, `de`, `zh-Hant-TW`); the token worker stores it in canonical case.
    static func locale(_ value: String) -> String? {
        LanguageTag.normalized(value) == nil ? LanguageTag.rule : nil
    }

    static func httpURL(_ value: String) -> String? {
        guard let url = URL(string: value), let scheme = url.scheme?.lowercased(),
              scheme == "https" || scheme == "http", url.host?.isEmpty == false else {
            return "must be an http(s) URL"
        }
        return nil
    }
}
