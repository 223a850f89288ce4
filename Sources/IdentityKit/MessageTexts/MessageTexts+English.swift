extension MessageTexts {
    static let english = MessageTexts(
        mails: [
            "email_code": Mail(
                subject: "Your sign-in code for {{app_name}}",
                text: "Your sign-in code for {{app_name}} is {{code}}.\n\nIt expires in 10 minutes and works once.\n{{link}}\n\nIf you did not ask for it, ignore this email."),
            "password_reset": Mail(
                subject: "Reset your {{app_name}} password",
                text: "Your password reset code for {{app_name}} is {{code}}.\n{{link}}\n\nIt expires in 10 minutes. If you did not ask to reset your password, ignore this email."),
            "mfa_code": Mail(
                subject: "Your {{app_name}} security code",
                text: "Your security code for signing in to {{app_name}} is {{code}}.\n\nIt expires in 10 minutes and works once. If you did not just sign in, change your password."),
            "email_verification": Mail(
                subject: "Verify your email for {{app_name}}",
                text: "Your verification code for {{app_name}} is {{code}}.\n{{link}}\n\nIt expires in 10 minutes."),
            "console_invitation": Mail(
                subject: "{{inviter}} invited you to {{member_app}}",
                text: "Hello,\n\n{{inviter}} gave your address ({{email}}) the role {{role}} in {{member_app}} on {{app_name}}.\n\nOpen this link to create your console account (or, if you have one, to accept and sign in). It works once, for 7 days:\n{{link}}\n\nIf you did not expect this, ignore this email."),
        ],
        alerts: [
            .newSignIn: Alert(title: "New sign-in to {{app_name}}", sentence: "Your {{app_name}} account was signed in to from a new device ({{device}}, {{ip}}) at {{time}}."),
            .passwordChanged: Alert(title: "Your {{app_name}} password was changed", sentence: "The password of your {{app_name}} account was changed at {{time}}."),
            .emailChanged: Alert(title: "Your {{app_name}} email address was changed", sentence: "The email address of your {{app_name}} account was changed at {{time}}."),
            .mfaEnabled: Alert(title: "Two-step verification turned on", sentence: "Two-step verification was turned on for your {{app_name}} account at {{time}}."),
            .mfaDisabled: Alert(title: "Two-step verification turned off", sentence: "Two-step verification was turned off for your {{app_name}} account at {{time}}."),
            .passkeyAdded: Alert(title: "A passkey was added to {{app_name}}", sentence: "A passkey was added to your {{app_name}} account at {{time}}."),
            .passkeyRemoved: Alert(title: "A passkey was removed from {{app_name}}", sentence: "A passkey was removed from your {{app_name}} account at {{time}}."),
            .phoneChanged: Alert(title: "Your {{app_name}} phone number was changed", sentence: "A phone number was linked to your {{app_name}} account at {{time}}."),
            .providerLinked: Alert(title: "A sign-in method was added to {{app_name}}", sentence: "A {{provider}} account was linked to your {{app_name}} account at {{time}}."),
            .providerUnlinked: Alert(title: "A sign-in method was removed from {{app_name}}", sentence: "A {{provider}} account was unlinked from your {{app_name}} account at {{time}}."),
            .backupCodesRenewed: Alert(title: "New backup codes for {{app_name}}", sentence: "New backup codes were made for your {{app_name}} account at {{time}}; the old ones no longer work."),
            .backupCodesLow: Alert(title: "Few backup codes left for {{app_name}}", sentence: "Your {{app_name}} account has few backup codes left: make new ones soon."),
            .mfaCodeReused: Alert(title: "A used security code was tried on {{app_name}}", sentence: "A two-step verification code of your {{app_name}} account that had already been used was entered again ({{device}}, {{ip}}) at {{time}}, and refused. Whoever entered it may know your password."),
        ],
        alertAdvice: "If this was not you, change your password and sign out your other sessions.",
        sms: [
            "phone_code": "{{code}} is your {{app_name}} sign-in code. It expires in 10 minutes.",
            "phone_link": "{{code}} is your {{app_name}} code to add this phone. It expires in 10 minutes.",
            "mfa_sms": "{{code}} is your {{app_name}} verification code. It expires in 10 minutes.",
        ])
}
