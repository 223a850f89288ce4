import Foundation

/// What a security alert tells the user. Each kind is also the name of its templates
/// (`security_alert_new_sign_in.subject`, `.text`, `.html`, `.push_title`, `.push_body`).
public enum SecurityAlertKind: String, CaseIterable, Sendable {
    case newSignIn = "new_sign_in"
    case passwordChanged = "password_changed"
    case emailChanged = "email_changed"
    case mfaEnabled = "mfa_enabled"
    case mfaDisabled = "mfa_disabled"
    case passkeyAdded = "passkey_added"
    case passkeyRemoved = "passkey_removed"
    case phoneChanged = "phone_changed"
    case providerLinked = "provider_linked"
    case providerUnlinked = "provider_unlinked"
    case backupCodesRenewed = "backup_codes_renewed"
    case backupCodesLow = "backup_codes_low"
    /// A TOTP code that was already used was entered again (and refused): someone else has seen
    /// one of the owner's codes, and likely knows the password (OWASP ASVS 2.8.5).
    case mfaCodeReused = "mfa_code_reused"

    public var template: String { "security_alert_" + rawValue }
}

/// Raises security alerts: when the app has them on (the default: a change of a way into an
/// account is what a thief with a stolen token would make, and the owner must hear of it), one `SendEmail` (to the account's address)
/// and one `SendPush` (to the user's devices but those of the session that caused it) go into
/// the outbox in the transaction of the change itself. Why commands through the outbox, not
/// the events exchange: the outbox row commits with the change and stays until the broker has
/// confirmed the message onto the mailer's durable queue, where it waits for a mailer however
/// long none runs; an event is only delivered to queues bound at publish time, so an alert
/// published while no mailer had bound its queue would be lost, and an event consumer would
/// also need read on every tenant's events.
public struct SecurityAlerts: Sendable {
    public init() {}

    /// A use of a backup code that leaves this many or fewer raises `backup_codes_low`.
    public static let backupCodesLowThreshold = 2

    public struct Context: Sendable {
        public var sessionId: String = ""
        public var ip: String = ""
        public var userAgent: String = ""
        /// The provider a link or unlink alert names (`{{provider}}`).
        public var provider: String = ""
        public init(sessionId: String = "", ip: String = "", userAgent: String = "", provider: String = "") {
            self.sessionId = sessionId
            self.ip = ip
            self.userAgent = userAgent
            self.provider = provider
        }
    }

    /// Queues the alert if the app has alerts on; true when it did. The address is `address`
    /// when given (an email change alerts the address it was changed from), else the
    /// account's as this transaction sees it.
    @discardableResult
    public func raise(_ kind: SecurityAlertKind, appId: String, uid: String, context: Context, address: String? = nil,
                      on connection: PGConnection) throws -> Bool {
        guard try alertsOn(appId: appId, on: connection) else { return false }
        let account = try connection.query("SELECT email, locale FROM users WHERE app_id = $1 AND uid = $2", [appId, uid]).first
        let email = try address ?? account?.optionalString("email")
        // The owner's locale, never the request's languages: the request may be the intruder's.
        let languages = MessageLanguages.preferences(locale: try account?.optionalString("locale"), request: [])
        let values = [
            MailerV1.TemplateValue(name: "device", value: String(context.userAgent.prefix(200))),
            MailerV1.TemplateValue(name: "ip", value: context.ip),
            MailerV1.TemplateValue(name: "time", value: Timestamp.rfc3339(Date())),
        ] + (context.provider.isEmpty ? [] : [MailerV1.TemplateValue(name: "provider", value: Self.providerName(context.provider))])
        if let email, !email.isEmpty {
            let mail = MailerV1.SendEmail(messageId: "mail_" + Identifiers.nowULID(), appId: appId, to: email,
                                          kind: kind.template, code: "", values: values, languages: languages)
            try EventOutbox.appendCommand(mail, queue: DeliveryChannel.email.queue, appId: appId, on: connection)
        }
        // The devices now, before this change ends any session (see `SendPush.targets`).
        let targets = try connection.query("""
            SELECT id, kind, token FROM devices WHERE app_id = $1 AND uid = $2 AND session_id <> $3 ORDER BY created_at, id
            """, [appId, uid, context.sessionId]).map { row in
            MailerV1.PushTarget(deviceId: try row.string("id"), kind: try row.string("kind"), token: try row.string("token"))
        }
        guard !targets.isEmpty else {
            Log.info("security alert queued", ["app_id": appId, "kind": kind.rawValue, "push": "no other device"])
            return true
        }
        let push = MailerV1.SendPush(messageId: "push_" + Identifiers.nowULID(), appId: appId, uid: uid, kind: kind.template,
                                     excludeSessionId: context.sessionId, values: values, targets: targets,
                                     languages: languages)
        try EventOutbox.appendCommand(push, queue: DeliveryChannel.push.queue, appId: appId, on: connection)
        Log.info("security alert queued", ["app_id": appId, "kind": kind.rawValue])
        return true
    }

    /// How an alert names a provider to a person.
    static func providerName(_ provider: String) -> String {
        ["apple": "Apple", "google": "Google", "firebase": "Firebase"][provider] ?? provider
    }

    public func alertsOn(appId: String, on connection: PGConnection) throws -> Bool {
        try connection.query("SELECT security_alerts FROM app_push_settings WHERE app_id = $1", [appId])
            .first?.bool("security_alerts") ?? true
    }

    /// Records the device a session is started from (a SHA-256 of its user agent) and tells
    /// whether it is new for a user who had signed in from another device before: the first
    /// sign-in of an account is no alert, nor a device seen before. A known device's
    /// `last_seen_at` moves at most once a day (the retention purge forgets devices unseen for
    /// `IDENTITY_KNOWN_DEVICE_RETENTION_SECONDS`).
    public func isNewDevice(appId: String, uid: String, userAgent: String, on connection: PGConnection) throws -> Bool {
        let fingerprint = Digest.sha256(Array(userAgent.utf8))
        // One round trip on every session start: the upsert, and whether another device was
        // known before it (the outer query's snapshot does not see the row just written). A row
        // just inserted has its two times equal (one transaction's now()); one updated has not.
        return try connection.query("""
            WITH seen AS (
                INSERT INTO user_known_devices (app_id, uid, fingerprint) VALUES ($1, $2, $3)
                ON CONFLICT (app_id, uid, fingerprint) DO UPDATE SET last_seen_at = now()
                  WHERE user_known_devices.last_seen_at < now() - interval '1 day'
                RETURNING first_seen_at = last_seen_at AS inserted
            )
            SELECT coalesce((SELECT inserted FROM seen), false)
                   AND EXISTS (SELECT 1 FROM user_known_devices WHERE app_id = $1 AND uid = $2 AND fingerprint <> $3)
                   AS new_device
            """, [appId, uid, PGParam.bytea(fingerprint)]).first?.bool("new_device") ?? false
    }
}
