extension MessageTexts {
    /// The built-in texts in Spanish (es).
    static let spanish = MessageTexts(
        mails: [
            "email_code": Mail(
                subject: "Tu código de inicio de sesión para {{app_name}}",
                text: "Tu código de inicio de sesión para {{app_name}} es {{code}}.\n\nExpira en 10 minutos y solo se puede usar una vez.\n{{link}}\n\nSi no solicitaste este código, puedes ignorar este correo."),
            "password_reset": Mail(
                subject: "Restablece tu contraseña de {{app_name}}",
                text: "Tu código para restablecer la contraseña de {{app_name}} es {{code}}.\n{{link}}\n\nExpira en 10 minutos. Si no solicitaste restablecer tu contraseña, puedes ignorar este correo."),
            "mfa_code": Mail(
                subject: "Tu código de seguridad de {{app_name}}",
                text: "Tu código de seguridad para iniciar sesión en {{app_name}} es {{code}}.\n\nExpira en 10 minutos y solo se puede usar una vez. Si no acabas de iniciar sesión, cambia tu contraseña."),
            "email_verification": Mail(
                subject: "Verifica tu correo electrónico para {{app_name}}",
                text: "Tu código de verificación para {{app_name}} es {{code}}.\n{{link}}\n\nExpira en 10 minutos."),
            "console_invitation": Mail(
                subject: "{{inviter}} te ha invitado a {{member_app}}",
                text: "Hola:\n\n{{inviter}} ha dado a tu dirección ({{email}}) el rol {{role}} en {{member_app}} en {{app_name}}.\n\nAbre este enlace para crear tu cuenta de la consola (o, si ya tienes una, para aceptar e iniciar sesión). Sirve una vez, durante 7 días:\n{{link}}\n\nSi no lo esperabas, ignora este correo."),
        ],
        alerts: [
            .newSignIn: Alert(title: "Nuevo inicio de sesión en {{app_name}}", sentence: "Se inició sesión en tu cuenta de {{app_name}} desde un dispositivo nuevo ({{device}}, {{ip}}) el {{time}}."),
            .passwordChanged: Alert(title: "Se cambió tu contraseña de {{app_name}}", sentence: "La contraseña de tu cuenta de {{app_name}} se cambió el {{time}}."),
            .emailChanged: Alert(title: "Se cambió tu correo electrónico de {{app_name}}", sentence: "La dirección de correo electrónico de tu cuenta de {{app_name}} se cambió el {{time}}."),
            .mfaEnabled: Alert(title: "Verificación en dos pasos activada", sentence: "Se activó la verificación en dos pasos en tu cuenta de {{app_name}} el {{time}}."),
            .mfaDisabled: Alert(title: "Verificación en dos pasos desactivada", sentence: "Se desactivó la verificación en dos pasos en tu cuenta de {{app_name}} el {{time}}."),
            .passkeyAdded: Alert(title: "Se agregó una llave de acceso a {{app_name}}", sentence: "Se agregó una llave de acceso a tu cuenta de {{app_name}} el {{time}}."),
            .passkeyRemoved: Alert(title: "Se eliminó una llave de acceso de {{app_name}}", sentence: "Se eliminó una llave de acceso de tu cuenta de {{app_name}} el {{time}}."),
            .phoneChanged: Alert(title: "Se cambió tu número de teléfono de {{app_name}}", sentence: "Se vinculó un número de teléfono a tu cuenta de {{app_name}} el {{time}}."),
            .providerLinked: Alert(title: "Se agregó un método de inicio de sesión a {{app_name}}", sentence: "Se vinculó una cuenta de {{provider}} a tu cuenta de {{app_name}} el {{time}}."),
            .providerUnlinked: Alert(title: "Se eliminó un método de inicio de sesión de {{app_name}}", sentence: "Se desvinculó una cuenta de {{provider}} de tu cuenta de {{app_name}} el {{time}}."),
            .backupCodesRenewed: Alert(title: "Nuevos códigos de respaldo para {{app_name}}", sentence: "Se generaron nuevos códigos de respaldo para tu cuenta de {{app_name}} el {{time}}; los anteriores ya no funcionan."),
            .backupCodesLow: Alert(title: "Te quedan pocos códigos de respaldo para {{app_name}}", sentence: "A tu cuenta de {{app_name}} le quedan pocos códigos de respaldo. Genera nuevos pronto."),
            .mfaCodeReused: Alert(title: "Se intentó usar un código de seguridad ya utilizado en {{app_name}}", sentence: "El {{time}} se volvió a ingresar un código de verificación en dos pasos de tu cuenta de {{app_name}} que ya se había usado ({{device}}, {{ip}}), y se rechazó. Quien lo ingresó podría conocer tu contraseña."),
        ],
        alertAdvice: "Si no fuiste tú, cambia tu contraseña y cierra tus otras sesiones.",
        sms: [
            "phone_code": "Usa {{code}} para acceder a {{app_name}}. Expira en 10 minutos.",
            "phone_link": "Usa {{code}} para agregar este teléfono a {{app_name}}. Expira en 10 minutos.",
            "mfa_sms": "Usa {{code}} para verificar tu acceso a {{app_name}}. Expira en 10 minutos.",
        ])
}
