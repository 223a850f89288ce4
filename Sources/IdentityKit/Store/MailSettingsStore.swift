import Foundation

/// An app's mail settings: the deep link for magic links, the sender, and per-kind templates
/// (`subject`, `text`, `html` with `{{app_name}}`, `{{code}}`, `{{link}}`, `{{email}}`).
public struct MailSettings: Sendable, Equatable {
    public var deepLinkURL: String?
    public var fromName: String?
    public var fromAddress: String?
    /// kind → part (`subject`, or `subject.de` for one language) → template.
    public var templates: [String: [String: String]] = [:]
    /// BCP 47; nil: English.
    public var defaultLocale: String?

    public init() {}
}

public struct MailSettingsStore: Sendable {
    let pool: PGPool

    public init(pool: PGPool) { self.pool = pool }

    public func settings(appId: String) throws -> MailSettings {
        let row = try pool.withConnection { connection in
            try connection.query("""
                SELECT deep_link_url, from_name, from_address, templates::text AS templates, default_locale
                FROM app_mail_settings WHERE app_id = $1
                """, [appId]).first
        }
        var settings = MailSettings()
        guard let row else { return settings }
        settings.deepLinkURL = try row.optionalString("deep_link_url")
        settings.fromName = try row.optionalString("from_name")
        settings.fromAddress = try row.optionalString("from_address")
        settings.defaultLocale = try row.optionalString("default_locale")
        // Our own jsonb, written by `save`; HTML templates can add up past the 64 KiB
        // default for request bodies, and a cap they passed would drop them all silently.
        if case .object(let kinds)? = JSONValue.parse(Data(try row.string("templates").utf8), maximumBytes: 16 << 20) {
            for (kind, parts) in kinds {
                guard case .object(let parts) = parts else { continue }
                var texts: [String: String] = [:]
                for (part, value) in parts { if case .string(let text) = value { texts[part] = text } }
                settings.templates[kind] = texts
            }
        }
        return settings
    }

    public func save(appId: String, _ settings: MailSettings) throws {
        let templates = JSONValue.object(settings.templates.mapValues { parts in .object(parts.mapValues { .string($0) }) })
        try pool.withConnection { connection in
            try connection.query("""
                INSERT INTO app_mail_settings (app_id, deep_link_url, from_name, from_address, templates, default_locale,
                                               updated_at)
                VALUES ($1, $2, $3, $4, $5::jsonb, $6, now())
                ON CONFLICT (app_id) DO UPDATE SET deep_link_url = EXCLUDED.deep_link_url,
                    from_name = EXCLUDED.from_name, from_address = EXCLUDED.from_address,
                    templates = EXCLUDED.templates, default_locale = EXCLUDED.default_locale, updated_at = now()
                """, [appId, settings.deepLinkURL, settings.fromName, settings.fromAddress, templates.serialized,
                      settings.defaultLocale])
        }
    }
}
