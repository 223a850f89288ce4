import Foundation

/// The texts one app's messages are written from, in every language: its overrides
/// (`mail_templates`: kind → `part` or `part.LANGUAGE` → text) over the built-in texts
/// (`MessageTexts`). A part without a language is the app's text for its default language.
public struct MessageTemplates: Sendable {
    /// kind → part (`subject`, `subject.de`) → text, as `MailSettingsStore` reads them.
    public let overrides: [String: [String: String]]
    /// The app's default language (BCP 47); English when it set none.
    public let defaultLanguage: String

    public init(overrides: [String: [String: String]], defaultLanguage: String?) {
        self.overrides = overrides
        self.defaultLanguage = defaultLanguage.flatMap(LanguageTag.normalized) ?? "en"
    }

    /// The language a message of `kind` is written in: the first of `preferences` (the user's
    /// locale, then the request's languages), then the app's default, then English, for which
    /// there are texts, each tried as given and then shorter (`pt-BR`, then `pt`; RFC 4647's lookup).
    public func language(kind: String, preferences: [String]) -> String {
        for preference in preferences + [defaultLanguage, "en"] {
            for candidate in LanguageTag.fallbacks(preference) where hasTexts(kind: kind, language: candidate) {
                return candidate
            }
        }
        return "en"
    }

    /// One part of a message in `language`: the app's text for that language, else its text
    /// without a language when that is its default language, else the built-in text, else the
    /// app's text without a language, else English.
    public func part(_ part: String, kind: String, language: String) -> String? {
        let own = overrides[kind] ?? [:]
        let isDefault = LanguageTag.primary(language) == LanguageTag.primary(defaultLanguage)
        return own[part + "." + language]
            ?? (isDefault ? own[part] : nil)
            ?? MessageTexts.builtInPart(part, kind: kind, language: language)
            ?? own[part]
            ?? MessageTexts.builtInPart(part, kind: kind, language: "en")
    }

    private func hasTexts(kind: String, language: String) -> Bool {
        if MessageTexts.builtIn[language] != nil { return true }
        let suffix = "." + language
        if (overrides[kind] ?? [:]).keys.contains(where: { $0.hasSuffix(suffix) }) { return true }
        // The app's texts without a language are in its default language.
        return language == defaultLanguage && !(overrides[kind] ?? [:]).isEmpty
    }
}

extension MessageTexts {
    /// A built-in part of a message kind: `subject`, `text` and `html` of a mail (an alert's
    /// also `push_title` and `push_body`), `text` of an SMS.
    static func builtInPart(_ part: String, kind: String, language: String) -> String? {
        guard let texts = builtIn[language] else { return nil }
        if let mail = texts.mails[kind] {
            switch part {
            case "subject": return mail.subject
            case "text": return mail.text
            case "html": return html(mail.text)
            default: return nil
            }
        }
        if let alertKind = SecurityAlertKind.allCases.first(where: { $0.template == kind }), let alert = texts.alerts[alertKind] {
            let text = alert.sentence + "\n\n" + texts.alertAdvice
            switch part {
            case "subject", "push_title": return alert.title
            case "text": return text
            case "html": return html(text)
            case "push_body": return alert.sentence
            default: return nil
            }
        }
        return part == "text" ? texts.sms[kind] : nil
    }

    /// The HTML part of a built-in text: a paragraph per blank-line-separated block, a line
    /// break per line, the code in bold. The text is ours, but escaped all the same: a French
    /// apostrophe is `&#39;`, and the renderer escapes every value it fills in.
    static func html(_ text: String) -> String {
        text.components(separatedBy: "\n\n").map { paragraph in
            "<p>" + MailRenderer.escapeHTML(paragraph).components(separatedBy: "\n").joined(separator: "<br>")
                .replacingOccurrences(of: "{{code}}", with: "<strong>{{code}}</strong>") + "</p>"
        }.joined()
    }
}
