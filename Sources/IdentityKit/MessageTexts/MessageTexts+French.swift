extension MessageTexts {
    /// The built-in texts in French (fr).
    static let french = MessageTexts(
        mails: [
            "email_code": Mail(
                subject: "Votre code de connexion pour {{app_name}}",
                text: "Votre code de connexion pour {{app_name}} est {{code}}.\n\nIl expire dans 10 minutes et ne peut être utilisé qu'une seule fois.\n{{link}}\n\nSi vous n'avez pas demandé ce code, vous pouvez ignorer cet e-mail."),
            "password_reset": Mail(
                subject: "Réinitialisation de votre mot de passe {{app_name}}",
                text: "Votre code de réinitialisation du mot de passe pour {{app_name}} est {{code}}.\n{{link}}\n\nIl expire dans 10 minutes. Si vous n'avez pas demandé la réinitialisation de votre mot de passe, vous pouvez ignorer cet e-mail."),
            "mfa_code": Mail(
                subject: "Votre code de sécurité {{app_name}}",
                text: "Votre code de sécurité pour vous connecter à {{app_name}} est {{code}}.\n\nIl expire dans 10 minutes et ne peut être utilisé qu'une seule fois. Si vous ne venez pas de vous connecter, modifiez votre mot de passe."),
            "email_verification": Mail(
                subject: "Vérifiez votre adresse e-mail pour {{app_name}}",
                text: "Votre code de vérification pour {{app_name}} est {{code}}.\n{{link}}\n\nIl expire dans 10 minutes."),
            "console_invitation": Mail(
                subject: "{{inviter}} vous invite sur {{member_app}}",
                text: "Bonjour,\n\n{{inviter}} a donné à votre adresse ({{email}}) le rôle {{role}} dans {{member_app}} sur {{app_name}}.\n\nOuvrez ce lien pour créer votre compte de console (ou, si vous en avez un, pour accepter et vous connecter). Il sert une fois, pendant 7 jours :\n{{link}}\n\nSi vous ne vous y attendiez pas, ignorez cet e-mail."),
        ],
        alerts: [
            .newSignIn: Alert(title: "Nouvelle connexion à {{app_name}}", sentence: "Une connexion à votre compte {{app_name}} a été effectuée depuis un nouvel appareil ({{device}}, {{ip}}) le {{time}}."),
            .passwordChanged: Alert(title: "Votre mot de passe {{app_name}} a été modifié", sentence: "Le mot de passe de votre compte {{app_name}} a été modifié le {{time}}."),
            .emailChanged: Alert(title: "Votre adresse e-mail {{app_name}} a été modifiée", sentence: "L'adresse e-mail de votre compte {{app_name}} a été modifiée le {{time}}."),
            .mfaEnabled: Alert(title: "Validation en deux étapes activée", sentence: "La validation en deux étapes a été activée pour votre compte {{app_name}} le {{time}}."),
            .mfaDisabled: Alert(title: "Validation en deux étapes désactivée", sentence: "La validation en deux étapes a été désactivée pour votre compte {{app_name}} le {{time}}."),
            .passkeyAdded: Alert(title: "Une clé d'accès a été ajoutée à votre compte {{app_name}}", sentence: "Une clé d'accès a été ajoutée à votre compte {{app_name}} le {{time}}."),
            .passkeyRemoved: Alert(title: "Une clé d'accès a été supprimée de votre compte {{app_name}}", sentence: "Une clé d'accès a été supprimée de votre compte {{app_name}} le {{time}}."),
            .phoneChanged: Alert(title: "Votre numéro de téléphone {{app_name}} a été modifié", sentence: "Un numéro de téléphone a été associé à votre compte {{app_name}} le {{time}}."),
            .providerLinked: Alert(title: "Une méthode de connexion a été ajoutée à votre compte {{app_name}}", sentence: "Un compte {{provider}} a été associé à votre compte {{app_name}} le {{time}}."),
            .providerUnlinked: Alert(title: "Une méthode de connexion a été supprimée de votre compte {{app_name}}", sentence: "Un compte {{provider}} a été dissocié de votre compte {{app_name}} le {{time}}."),
            .backupCodesRenewed: Alert(title: "Nouveaux codes de secours pour {{app_name}}", sentence: "De nouveaux codes de secours ont été générés pour votre compte {{app_name}} le {{time}}. Les anciens codes ne sont plus valides."),
            .backupCodesLow: Alert(title: "Il vous reste peu de codes de secours pour {{app_name}}", sentence: "Il ne reste que quelques codes de secours sur votre compte {{app_name}}. Pensez à en générer de nouveaux prochainement."),
            .mfaCodeReused: Alert(title: "Un code de sécurité déjà utilisé a été saisi sur {{app_name}}", sentence: "Un code de validation en deux étapes de votre compte {{app_name}} déjà utilisé a été saisi à nouveau ({{device}}, {{ip}}) le {{time}} et a été refusé. La personne qui l'a saisi connaît peut-être votre mot de passe."),
        ],
        alertAdvice: "Si vous n'êtes pas à l'origine de cette action, modifiez votre mot de passe et déconnectez-vous de vos autres sessions.",
        sms: [
            "phone_code": "{{code}} est votre code de connexion {{app_name}}. Il expire dans 10 minutes.",
            "phone_link": "{{code}} est votre code {{app_name}} pour ajouter ce numéro. Il expire dans 10 minutes.",
            "mfa_sms": "{{code}} est votre code de vérification {{app_name}}. Il expire dans 10 minutes.",
        ])
}
