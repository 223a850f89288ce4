extension MessageTexts {
    /// The built-in texts in Brazilian Portuguese (pt-BR).
    static let brazilianPortuguese = MessageTexts(
        mails: [
            "email_code": Mail(
                subject: "Seu código de login do {{app_name}}",
                text: "Seu código de login do {{app_name}} é {{code}}.\n\nEle expira em 10 minutos e só pode ser usado uma vez.\n{{link}}\n\nSe você não solicitou este código, ignore este e-mail."),
            "password_reset": Mail(
                subject: "Redefina sua senha do {{app_name}}",
                text: "Seu código para redefinir a senha do {{app_name}} é {{code}}.\n{{link}}\n\nEle expira em 10 minutos. Se você não pediu para redefinir sua senha, ignore este e-mail."),
            "mfa_code": Mail(
                subject: "Seu código de segurança do {{app_name}}",
                text: "Seu código de segurança para fazer login no {{app_name}} é {{code}}.\n\nEle expira em 10 minutos e só pode ser usado uma vez. Se não foi você que acabou de fazer login, altere sua senha."),
            "email_verification": Mail(
                subject: "Confirme seu e-mail do {{app_name}}",
                text: "Seu código de verificação do {{app_name}} é {{code}}.\n{{link}}\n\nEle expira em 10 minutos."),
            "console_invitation": Mail(
                subject: "{{inviter}} convidou você para {{member_app}}",
                text: "Olá,\n\n{{inviter}} deu ao seu endereço ({{email}}) o papel {{role}} em {{member_app}} no {{app_name}}.\n\nAbra este link para criar sua conta do console (ou, se já tiver uma, para aceitar e entrar). Ele vale uma vez, por 7 dias:\n{{link}}\n\nSe você não esperava por isso, ignore este e-mail."),
        ],
        alerts: [
            .newSignIn: Alert(title: "Novo login no {{app_name}}", sentence: "Sua conta do {{app_name}} foi acessada de um novo dispositivo ({{device}}, {{ip}}) em {{time}}."),
            .passwordChanged: Alert(title: "Sua senha do {{app_name}} foi alterada", sentence: "A senha da sua conta do {{app_name}} foi alterada em {{time}}."),
            .emailChanged: Alert(title: "Seu endereço de e-mail do {{app_name}} foi alterado", sentence: "O endereço de e-mail da sua conta do {{app_name}} foi alterado em {{time}}."),
            .mfaEnabled: Alert(title: "Verificação em duas etapas ativada", sentence: "A verificação em duas etapas foi ativada na sua conta do {{app_name}} em {{time}}."),
            .mfaDisabled: Alert(title: "Verificação em duas etapas desativada", sentence: "A verificação em duas etapas foi desativada na sua conta do {{app_name}} em {{time}}."),
            .passkeyAdded: Alert(title: "Chave de acesso adicionada ao {{app_name}}", sentence: "Uma chave de acesso foi adicionada à sua conta do {{app_name}} em {{time}}."),
            .passkeyRemoved: Alert(title: "Chave de acesso removida do {{app_name}}", sentence: "Uma chave de acesso foi removida da sua conta do {{app_name}} em {{time}}."),
            .phoneChanged: Alert(title: "Seu número de telefone do {{app_name}} foi alterado", sentence: "Um número de telefone foi vinculado à sua conta do {{app_name}} em {{time}}."),
            .providerLinked: Alert(title: "Método de login adicionado ao {{app_name}}", sentence: "Uma conta {{provider}} foi vinculada à sua conta do {{app_name}} em {{time}}."),
            .providerUnlinked: Alert(title: "Método de login removido do {{app_name}}", sentence: "Uma conta {{provider}} foi desvinculada da sua conta do {{app_name}} em {{time}}."),
            .backupCodesRenewed: Alert(title: "Novos códigos de backup do {{app_name}}", sentence: "Novos códigos de backup foram gerados para sua conta do {{app_name}} em {{time}}; os antigos não funcionam mais."),
            .backupCodesLow: Alert(title: "Restam poucos códigos de backup no {{app_name}}", sentence: "Restam poucos códigos de backup na sua conta do {{app_name}}. Gere novos em breve."),
            .mfaCodeReused: Alert(title: "Um código de segurança já usado foi inserido no {{app_name}}", sentence: "Um código de verificação em duas etapas da sua conta do {{app_name}} que já tinha sido usado foi inserido novamente ({{device}}, {{ip}}) em {{time}} e recusado. Quem o inseriu pode saber sua senha."),
        ],
        alertAdvice: "Se não foi você, altere sua senha e encerre suas outras sessões.",
        sms: [
            "phone_code": "Use {{code}} para entrar no {{app_name}}. Expira em 10 minutos.",
            "phone_link": "Use {{code}} para adicionar este telefone ao {{app_name}}. Expira em 10 minutos.",
            "mfa_sms": "Use {{code}} para confirmar seu login no {{app_name}}. Expira em 10 minutos.",
        ])
}
