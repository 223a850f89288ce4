import XCTest
@testable import IdentityKit

final class LanguageTagTests: XCTestCase {
    func testWellFormedTagsAreKeptInCanonicalCase() {
        XCTAssertEqual(LanguageTag.normalized("pt-br"), "pt-BR")
        XCTAssertEqual(LanguageTag.normalized("ZH-hant-tw"), "zh-Hant-TW")
        XCTAssertEqual(LanguageTag.normalized("es-419"), "es-419")
        XCTAssertEqual(LanguageTag.normalized("de"), "de")
        XCTAssertEqual(LanguageTag.normalized("sr-Latn"), "sr-Latn")
        XCTAssertEqual(LanguageTag.normalized("de-CH-1996"), "de-CH-1996")
    }

    func testMalformedTagsAreRefused() {
        for bad in ["", "pt_BR", "e", "english-language", "de-", "-de", "de--CH", "d3", "de-toolongsubtag",
                    "de-" + String(repeating: "a-", count: 20) + "a", "ja\r\nBcc: x", "日本"] {
            XCTAssertNil(LanguageTag.normalized(bad), bad)
        }
    }

    func testFallbacksShortenTheTagOneSubtagAtATime() {
        XCTAssertEqual(LanguageTag.fallbacks("zh-Hant-TW"), ["zh-Hant-TW", "zh-Hant", "zh"])
        XCTAssertEqual(LanguageTag.fallbacks("pt-BR"), ["pt-BR", "pt"])
        XCTAssertEqual(LanguageTag.fallbacks("de"), ["de"])
        XCTAssertEqual(LanguageTag.primary("pt-BR"), "pt")
    }

    func testAcceptLanguageIsRankedByQualityThenOrder() {
        XCTAssertEqual(AcceptLanguage.parse("fr-CH, fr;q=0.9, en;q=0.8, de;q=0.7, *;q=0.5"), ["fr-CH", "fr", "en", "de"])
        XCTAssertEqual(AcceptLanguage.parse("en;q=0.2, ja, de;q=0.9"), ["ja", "de", "en"])
        XCTAssertEqual(AcceptLanguage.parse("de;q=0, fr"), ["fr"], "q=0 means not acceptable")
        XCTAssertEqual(AcceptLanguage.parse("pt-br, PT-BR;q=0.5"), ["pt-BR"], "each language once")
        XCTAssertEqual(AcceptLanguage.parse("en_US, x, de;q=abc, es;q=2"), [], "malformed entries are dropped")
        XCTAssertEqual(AcceptLanguage.parse((1...20).map { "l\(Character(UnicodeScalar(96 + $0)!))" }.joined(separator: ",")).count, 6)
        XCTAssertEqual(AcceptLanguage.parse(String(repeating: "de,", count: 5000) + "fr"), ["de"], "the header is read up to 1 KiB")
        XCTAssertEqual(AcceptLanguage.parse(""), [])
    }

    func testMessagePreferencesPutTheStoredLocaleFirst() {
        XCTAssertEqual(MessageLanguages.preferences(locale: "de", request: ["fr", "de"]), ["de", "fr"])
        XCTAssertEqual(MessageLanguages.preferences(locale: nil, request: ["fr"]), ["fr"])
        XCTAssertEqual(try MessageLanguages.checked("pt-br"), "pt-BR")
        XCTAssertNil(try MessageLanguages.checked(nil))
        XCTAssertThrowsError(try MessageLanguages.checked("pt_BR"))
    }

    func testTemplateTargetsNameAKindAPartAndMaybeALanguage() {
        XCTAssertEqual(AppSettingsUpdate.templateTarget("email_code.subject")?.part, "subject")
        XCTAssertEqual(AppSettingsUpdate.templateTarget("email_code.subject.pt-br")?.part, "subject.pt-BR")
        XCTAssertEqual(AppSettingsUpdate.templateTarget("phone_code.text.ja")?.kind, "phone_code")
        for bad in ["phone_code.subject", "email_code.subject.pt_BR", "email_code", "nope.subject", "email_code.body",
                    "email_code.subject.de.x", "email_code.subject."] {
            XCTAssertNil(AppSettingsUpdate.templateTarget(bad), bad)
        }
    }
}
