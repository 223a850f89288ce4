extension MessageTexts {
    /// The built-in texts in Japanese (ja).
    static let japanese = MessageTexts(
        mails: [
            "email_code": Mail(
                subject: "{{app_name}}のログインコード",
                text: "{{app_name}}のログインコードは {{code}} です。\n\nこのコードの有効期限は10分間で、1回のみ使用できます。\n{{link}}\n\nこのコードをリクエストした覚えがない場合は、このメールを無視してください。"),
            "password_reset": Mail(
                subject: "{{app_name}}のパスワード再設定",
                text: "{{app_name}}のパスワード再設定コードは {{code}} です。\n{{link}}\n\nこのコードの有効期限は10分間です。パスワードの再設定をリクエストした覚えがない場合は、このメールを無視してください。"),
            "mfa_code": Mail(
                subject: "{{app_name}}のセキュリティコード",
                text: "{{app_name}}へのログイン用セキュリティコードは {{code}} です。\n\nこのコードの有効期限は10分間で、1回のみ使用できます。ご自身でログインしようとしていない場合は、パスワードを変更してください。"),
            "email_verification": Mail(
                subject: "{{app_name}}のメールアドレスの確認",
                text: "{{app_name}}の確認コードは {{code}} です。\n{{link}}\n\nこのコードの有効期限は10分間です。"),
            "console_invitation": Mail(
                subject: "{{inviter}}さんが{{member_app}}に招待しました",
                text: "こんにちは。\n\n{{inviter}}さんが、このアドレス（{{email}}）に{{app_name}}の{{member_app}}での{{role}}の役割を付与しました。\n\n次のリンクを開いてコンソールのアカウントを作成してください（すでにお持ちの場合は、承諾してサインインしてください）。リンクは7日間、1回だけ使えます：\n{{link}}\n\n心当たりがない場合は、このメールを無視してください。"),
        ],
        alerts: [
            .newSignIn: Alert(title: "{{app_name}}への新しいログイン", sentence: "{{time}}に、新しいデバイス（{{device}}、{{ip}}）から{{app_name}}のアカウントへのログインがありました。"),
            .passwordChanged: Alert(title: "{{app_name}}のパスワードが変更されました", sentence: "{{time}}に、{{app_name}}のアカウントのパスワードが変更されました。"),
            .emailChanged: Alert(title: "{{app_name}}のメールアドレスが変更されました", sentence: "{{time}}に、{{app_name}}のアカウントのメールアドレスが変更されました。"),
            .mfaEnabled: Alert(title: "2段階認証が有効になりました", sentence: "{{time}}に、{{app_name}}のアカウントで2段階認証が有効になりました。"),
            .mfaDisabled: Alert(title: "2段階認証が無効になりました", sentence: "{{time}}に、{{app_name}}のアカウントで2段階認証が無効になりました。"),
            .passkeyAdded: Alert(title: "{{app_name}}にパスキーが追加されました", sentence: "{{time}}に、{{app_name}}のアカウントにパスキーが追加されました。"),
            .passkeyRemoved: Alert(title: "{{app_name}}からパスキーが削除されました", sentence: "{{time}}に、{{app_name}}のアカウントからパスキーが削除されました。"),
            .phoneChanged: Alert(title: "{{app_name}}の電話番号が変更されました", sentence: "{{time}}に、{{app_name}}のアカウントに電話番号が登録されました。"),
            .providerLinked: Alert(title: "{{app_name}}にログイン方法が追加されました", sentence: "{{time}}に、{{provider}}アカウントが{{app_name}}のアカウントと連携されました。"),
            .providerUnlinked: Alert(title: "{{app_name}}からログイン方法が削除されました", sentence: "{{time}}に、{{provider}}アカウントと{{app_name}}のアカウントの連携が解除されました。"),
            .backupCodesRenewed: Alert(title: "{{app_name}}の新しいバックアップコード", sentence: "{{time}}に、{{app_name}}のアカウントの新しいバックアップコードが作成されました。以前のコードは使用できなくなりました。"),
            .backupCodesLow: Alert(title: "{{app_name}}のバックアップコードが残りわずかです", sentence: "{{app_name}}のアカウントのバックアップコードが残りわずかです。早めに新しいコードを作成してください。"),
            .mfaCodeReused: Alert(title: "{{app_name}}で使用済みのセキュリティコードが入力されました", sentence: "{{time}}に、{{app_name}}のアカウントの使用済みの2段階認証コードが再度入力されました（{{device}}、{{ip}}）。このコードは拒否されましたが、入力した人物はお客様のパスワードを知っている可能性があります。"),
        ],
        alertAdvice: "お心当たりがない場合は、パスワードを変更し、他のセッションからログアウトしてください。",
        sms: [
            "phone_code": "{{app_name}}のログインコードは {{code}} です。有効期限は10分間です。",
            "phone_link": "この電話番号を{{app_name}}に追加するためのコードは {{code}} です。有効期限は10分間です。",
            "mfa_sms": "{{app_name}}の確認コードは {{code}} です。有効期限は10分間です。",
        ])
}
