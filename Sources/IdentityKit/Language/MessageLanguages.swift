/// The languages a message to a user may be written in, best first, as the token worker
/// hands them to the mailer (`SendEmail.languages`, `SendSms.languages`, `SendPush.languages`):
/// the user's stored locale, then the request's Accept-Language. The mailer adds the app's
/// default language and English after them and writes the message in the first one it has
/// texts for, trying `pt` after `pt-BR` (`MessageLanguage` in the mailer).
///
/// A security alert passes only the user's locale, never the request's languages: the request
/// may be the intruder's, and the owner must be able to read the alert.
public enum MessageLanguages {
    public static func preferences(locale: String?, request: [String]) -> [String] {
        var out: [String] = []
        for tag in (locale.map { [$0] } ?? []) + request where !out.contains(tag) { out.append(tag) }
        return out
    }

    /// A locale a command carries, in canonical case; 422 when it is not a BCP 47 tag. The
    /// gateway checked it already; a worker stays safe on its own.
    public static func checked(_ locale: String?, location: String = "body.locale") throws -> String? {
        guard let locale else { return nil }
        guard let tag = LanguageTag.normalized(locale) else {
            throw ServiceError.validationFailed([.init(location: location, message: LanguageTag.rule)])
        }
        return tag
    }
}
