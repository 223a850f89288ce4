
/// The built-in texts of one language: what every mail, alert and SMS says unless the app
/// overrides it (`mail_templates`, per kind and language). Placeholders are the renderer's
/// (`{{app_name}}`, `{{code}}`, `{{link}}`, `{{email}}`, for alerts `{{device}}`, `{{ip}}`,
/// `{{time}}`, `{{provider}}`, for a console invitation `{{member_app}}`, `{{role}}`,
/// `{{inviter}}`); every language uses the placeholders the English text uses (a test checks
/// it), so no translation drops the code or the link.
struct MessageTexts: Sendable {
    struct Mail: Sendable {
        let subject: String
        /// Paragraphs separated by a blank line; the HTML part is made from it (`html`).
        let text: String
    }

    struct Alert: Sendable {
        /// The subject of the mail and the title of the push notification.
        let title: String
        /// What happened: the first paragraph of the mail and the push notification's body.
        let sentence: String
    }

    /// `email_code`, `password_reset`, `email_verification`, `mfa_code`, `console_invitation`.
    let mails: [String: Mail]
    /// One per `SecurityAlertKind`.
    let alerts: [SecurityAlertKind: Alert]
    /// What to do if an alert's change was not the owner's: every alert's second paragraph.
    let alertAdvice: String
    /// `phone_code`, `phone_link`, `mfa_sms`: one line each (an SMS bill counts segments).
    let sms: [String: String]

    /// Every language with built-in texts, by BCP 47 tag. `pt-BR` is also what `pt` finds
    /// (`MessageLanguage.candidates` tries `pt` after `pt-BR`, and a bare `pt` here).
    static let builtIn: [String: MessageTexts] = [
        "en": .english, "de": .german, "fr": .french, "es": .spanish,
        "pt-BR": .brazilianPortuguese, "pt": .brazilianPortuguese, "ja": .japanese,
    ]
}
