/// Every kind of mail the mailer renders (`MailerV1.SendEmail.kind`, the `X-Identity-Mail-Kind`
/// header): the one list. The mailer's default texts are keyed by it (a test checks each kind
/// has them), an app may override the templates of exactly these (`AppSettingsUpdate`), and
/// identityctl's help and the API document name them from here.
public enum MailKind: Sendable, Hashable {
    case emailCode
    case passwordReset
    case emailVerification
    /// A code of the email second factor (enrolment and sign-in challenges).
    case mfaCode
    /// A console member's invitation to an app (the console's Members page): no code, a link to
    /// the console, written as the console app's mail.
    case consoleInvitation
    case alert(SecurityAlertKind)

    public var name: String {
        switch self {
        case .emailCode: "email_code"
        case .passwordReset: "password_reset"
        case .emailVerification: "email_verification"
        case .mfaCode: "mfa_code"
        case .consoleInvitation: "console_invitation"
        case .alert(let kind): kind.template
        }
    }

    public static let all: [MailKind] = [.emailCode, .passwordReset, .emailVerification, .mfaCode, .consoleInvitation]
        + SecurityAlertKind.allCases.map { .alert($0) }

    public static let names: [String] = all.map(\.name)
}

/// Every kind of SMS the mailer writes (`MailerV1.SendSms.kind`). An app may override the
/// `text` of each, per language, as it does a mail's parts (`mail_templates`).
public enum SmsKind: String, CaseIterable, Sendable {
    case phoneCode = "phone_code"
    case phoneLink = "phone_link"
    case mfaSms = "mfa_sms"

    public static let names: [String] = allCases.map(\.rawValue)
}
