extension MessageTexts {
    /// The built-in texts in German (de).
    static let german = MessageTexts(
        mails: [
            "email_code": Mail(
                subject: "Ihr Anmeldecode für {{app_name}}",
                text: "Ihr Anmeldecode für {{app_name}} lautet {{code}}.\n\nEr ist 10 Minuten lang gültig und kann nur einmal verwendet werden.\n{{link}}\n\nWenn Sie diesen Code nicht angefordert haben, können Sie diese E-Mail ignorieren."),
            "password_reset": Mail(
                subject: "Passwort für {{app_name}} zurücksetzen",
                text: "Ihr Code zum Zurücksetzen des Passworts für {{app_name}} lautet {{code}}.\n{{link}}\n\nEr ist 10 Minuten lang gültig. Wenn Sie kein neues Passwort angefordert haben, können Sie diese E-Mail ignorieren."),
            "mfa_code": Mail(
                subject: "Ihr Sicherheitscode für {{app_name}}",
                text: "Ihr Sicherheitscode für die Anmeldung bei {{app_name}} lautet {{code}}.\n\nEr ist 10 Minuten lang gültig und kann nur einmal verwendet werden. Wenn Sie sich nicht gerade selbst angemeldet haben, ändern Sie bitte Ihr Passwort."),
            "email_verification": Mail(
                subject: "Bestätigen Sie Ihre E-Mail-Adresse für {{app_name}}",
                text: "Ihr Bestätigungscode für {{app_name}} lautet {{code}}.\n{{link}}\n\nEr ist 10 Minuten lang gültig."),
            "console_invitation": Mail(
                subject: "{{inviter}} hat Sie zu {{member_app}} eingeladen",
                text: "Hallo,\n\n{{inviter}} hat Ihrer Adresse ({{email}}) die Rolle {{role}} in {{member_app}} auf {{app_name}} gegeben.\n\nÖffnen Sie diesen Link, um Ihr Konsolenkonto anzulegen (oder, wenn Sie eines haben, um anzunehmen und sich anzumelden). Er gilt einmal, 7 Tage lang:\n{{link}}\n\nWenn Sie das nicht erwartet haben, ignorieren Sie diese E-Mail."),
        ],
        alerts: [
            .newSignIn: Alert(title: "Neue Anmeldung bei {{app_name}}", sentence: "Ihr Konto bei {{app_name}} wurde am {{time}} zur Anmeldung auf einem neuen Gerät ({{device}}, {{ip}}) verwendet."),
            .passwordChanged: Alert(title: "Ihr Passwort für {{app_name}} wurde geändert", sentence: "Das Passwort Ihres Kontos bei {{app_name}} wurde am {{time}} geändert."),
            .emailChanged: Alert(title: "Ihre E-Mail-Adresse für {{app_name}} wurde geändert", sentence: "Die E-Mail-Adresse Ihres Kontos bei {{app_name}} wurde am {{time}} geändert."),
            .mfaEnabled: Alert(title: "Bestätigung in zwei Schritten aktiviert", sentence: "Die Bestätigung in zwei Schritten wurde am {{time}} für Ihr Konto bei {{app_name}} aktiviert."),
            .mfaDisabled: Alert(title: "Bestätigung in zwei Schritten deaktiviert", sentence: "Die Bestätigung in zwei Schritten wurde am {{time}} für Ihr Konto bei {{app_name}} deaktiviert."),
            .passkeyAdded: Alert(title: "Passkey für {{app_name}} hinzugefügt", sentence: "Ihrem Konto bei {{app_name}} wurde am {{time}} ein Passkey hinzugefügt."),
            .passkeyRemoved: Alert(title: "Passkey für {{app_name}} entfernt", sentence: "Aus Ihrem Konto bei {{app_name}} wurde am {{time}} ein Passkey entfernt."),
            .phoneChanged: Alert(title: "Ihre Telefonnummer für {{app_name}} wurde geändert", sentence: "Mit Ihrem Konto bei {{app_name}} wurde am {{time}} eine Telefonnummer verknüpft."),
            .providerLinked: Alert(title: "Anmeldemethode für {{app_name}} hinzugefügt", sentence: "Ein {{provider}}-Konto wurde am {{time}} mit Ihrem Konto bei {{app_name}} verknüpft."),
            .providerUnlinked: Alert(title: "Anmeldemethode für {{app_name}} entfernt", sentence: "Die Verknüpfung eines {{provider}}-Kontos mit Ihrem Konto bei {{app_name}} wurde am {{time}} aufgehoben."),
            .backupCodesRenewed: Alert(title: "Neue Backup-Codes für {{app_name}}", sentence: "Für Ihr Konto bei {{app_name}} wurden am {{time}} neue Backup-Codes erstellt; die bisherigen Codes sind nicht mehr gültig."),
            .backupCodesLow: Alert(title: "Nur noch wenige Backup-Codes für {{app_name}}", sentence: "Für Ihr Konto bei {{app_name}} sind nur noch wenige Backup-Codes übrig. Erstellen Sie bitte bald neue."),
            .mfaCodeReused: Alert(title: "Bereits verwendeter Sicherheitscode bei {{app_name}} eingegeben", sentence: "Ein bereits verwendeter Code für die Bestätigung in zwei Schritten Ihres Kontos bei {{app_name}} wurde am {{time}} erneut eingegeben ({{device}}, {{ip}}) und abgelehnt. Wer ihn eingegeben hat, kennt möglicherweise Ihr Passwort."),
        ],
        alertAdvice: "Wenn Sie das nicht waren, ändern Sie Ihr Passwort und beenden Sie Ihre anderen Sitzungen.",
        sms: [
            "phone_code": "{{code}} ist Ihr Anmeldecode für {{app_name}}. Er ist 10 Minuten lang gültig.",
            "phone_link": "{{code}} ist Ihr Code zum Hinzufügen dieser Nummer bei {{app_name}}. Er ist 10 Minuten lang gültig.",
            "mfa_sms": "{{code}} ist Ihr Bestätigungscode für {{app_name}}. Er ist 10 Minuten lang gültig.",
        ])
}
