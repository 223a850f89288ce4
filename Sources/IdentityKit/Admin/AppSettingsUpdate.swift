import Foundation

/// A change of an app's settings: the one implementation behind `identityctl apps settings` and
/// `PATCH /v1/admin/settings` (docs/api-contract.md, "Operating the service": "the same settings
/// are available through the admin API"). Each front end only turns its input (flags, a JSON body)
/// into this value; the rules (`problems`) are here and the writes (`apply`, which seals secrets
/// with the master key) in IdentityCredentials (`AppSettingsUpdate+Apply.swift`). nil leaves a
/// setting as it is; an empty string clears an optional text setting.
public struct AppSettingsUpdate: Sendable {
    public var accessTokenTTL: Int?
    public var sessionLifetime: Int?
    /// Seconds a session-token session (`session-object`, `single-token`) may go unused.
    public var sessionIdleTimeout: Int?
    /// What ending another session or all of them takes: `none`, or `fresh` (a sign-in within the
    /// step-up window; OWASP ASVS 5.0 7.5.2).
    public var sessionEndProof: String?
    public var googleClientIds: [String]?
    public var appleBundleIds: [String]?
    public var appleServicesIds: [String]?
    public var appleTeamId: String?
    public var appleKeyId: String?
    /// The Apple `.p8` key as PEM text; sealed with the master key before it is stored.
    public var applePrivateKeyPEM: String?
    public var firebaseProjectId: String?
    public var firebaseTrustEmailVerified: Bool?
    public var deepLinkURL: String?
    public var mailFromName: String?
    public var mailFromAddress: String?
    /// `KIND.PART` or `KIND.PART.LANGUAGE` → text (`templateKinds`, `templateParts`; LANGUAGE a
    /// BCP 47 tag). Without a language, the text of the app's default language.
    public var mailTemplates: [String: String] = [:]
    /// The language (BCP 47) of messages to users with no locale and no Accept-Language that
    /// has texts; empty: English.
    public var defaultLocale: String?
    /// Push credentials (see `PushSettingsStore`); the `.p8` and the service-account JSON are
    /// sealed under the push-credential sub-key of the master key before they are stored.
    public var apnsTeamId: String?
    public var apnsKeyId: String?
    public var apnsTopic: String?
    public var apnsPrivateKeyPEM: String?
    public var fcmServiceAccountJSON: String?
    /// Security alerts (new-device sign-in, password changed…) by email and push.
    public var securityAlerts: Bool?
    /// Phone sign-in's SMS policy and account (`sms_*`, SmsSettingsUpdate.swift); the auth
    /// token is sealed under the SMS-credential sub-key.
    public var sms = SmsSettingsUpdate()
    /// Limit name → `COUNT/WINDOW`, `default` or `off`.
    public var rateLimits: [String: String] = [:]
    /// `{"app_metadata": {…}, "user_metadata": {…}}` for the app's new users.
    public var defaultMetadata: JSONValue?

    // How clients reach the app and what guards it (AppSettingsUpdate+Edge.swift).
    /// `standard`, `single-token` or `session-object` (docs/client-profiles.md, "Profiles").
    public var profile: String?
    public var domains: [String]?
    /// Empty: `/v1` only.
    public var pathPrefix: String?
    public var allowedOrigins: [String]?
    /// `issued`, `client` or `none`: who makes Apple's nonce (none: seed 003's clients send none).
    public var appleNonce: String?
    public var webauthnRpId: String?
    public var webauthnOrigins: [String]?
    public var webauthnRpName: String?
    public var webauthnRequireUV: Bool?
    public var jwksCacheSeconds: Int?
    /// Failed sign-ins of one account or IP within 15 minutes that make an audit row.
    public var failedSignInAuditThreshold: Int?

    public init() {}

    /// The messages whose texts an app may override: every kind the mailer writes.
    public static let templateKinds = MailKind.names + SmsKind.names
    /// `push_title` and `push_body`: the push notification of a security alert. An SMS has only `text`.
    public static let templateParts = ["subject", "text", "html", "push_title", "push_body"]

    /// `KIND.PART[.LANGUAGE]` as the store keeps it (kind, and part with its language in
    /// canonical case), or nil when it names no kind, part or well-formed language.
    public static func templateTarget(_ target: String) -> (kind: String, part: String)? {
        let parts = target.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard (2...3).contains(parts.count), templateKinds.contains(parts[0]), templateParts.contains(parts[1]),
              !SmsKind.names.contains(parts[0]) || parts[1] == "text" else { return nil }
        guard parts.count == 3 else { return (parts[0], parts[1]) }
        guard let language = LanguageTag.normalized(parts[2]) else { return nil }
        return (parts[0], parts[1] + "." + language)
    }

    /// identityctl's flag for a setting (`rate_limits` → `--rate-limit`).
    public static func flag(_ setting: String) -> String {
        switch setting {
        case "rate_limits": "--rate-limit"
        case "mail_templates": "--mail-template"
        case "apple_private_key": "--apple-private-key-file"
        case "apns_private_key": "--apns-private-key-file"
        case "fcm_service_account": "--fcm-service-account-file"
        case "sms_auth_token": "--sms-auth-token-file"
        default: "--" + setting.replacingOccurrences(of: "_", with: "-")
        }
    }

    /// The rule of a numeric setting, for a value that is not a number at all.
    public static func describe(_ setting: String) -> String {
        var probe = AppSettingsUpdate()
        switch setting {
        case "access_token_ttl": probe.accessTokenTTL = -1
        case "sms_breaker_hourly": probe.sms.breakerHourly = -1
        case "session_idle_timeout": probe.sessionIdleTimeout = -1
        default: probe.sessionLifetime = -1
        }
        return probe.problems(offAllowed: false).first?.message ?? "must be an integer"
    }

    /// What is wrong, by setting name (as the API's body names it; identityctl's flag is the
    /// name with `-` for `_`). Empty: the update may be applied.
    public func problems(offAllowed: Bool) -> [(setting: String, message: String)] {
        var found: [(String, String)] = []
        if let ttl = accessTokenTTL, !(300...86_400).contains(ttl) {
            found.append(("access_token_ttl", "must be 300 to 86400 seconds (5 minutes to 24 hours)"))
        }
        if let seconds = sessionLifetime, !(3600...315_360_000).contains(seconds) {
            found.append(("session_lifetime", "must be 3600 to 315360000 seconds (1 hour to 10 years)"))
        }
        if let seconds = sessionIdleTimeout, !(300...31_536_000).contains(seconds) {
            found.append(("session_idle_timeout", "must be 300 to 31536000 seconds (5 minutes to 365 days)"))
        }
        if let proof = sessionEndProof, !["none", "fresh"].contains(proof) {
            found.append(("session_end_proof", "must be none or fresh"))
        }
        for (name, ids) in [("google_client_ids", googleClientIds), ("apple_bundle_ids", appleBundleIds),
                            ("apple_services_ids", appleServicesIds)] {
            if let ids, ids.count > 20 || ids.contains(where: { $0.isEmpty || $0.utf8.count > 256 || $0.contains(",") }) {
                found.append((name, "must be at most 20 ids of 1 to 256 characters, none with a comma"))
            }
        }
        for (name, text) in [("apple_team_id", appleTeamId), ("apple_key_id", appleKeyId),
                             ("firebase_project_id", firebaseProjectId), ("mail_from_name", mailFromName)] {
            if let text, text.utf8.count > 256 { found.append((name, "must be at most 256 characters")) }
        }
        if let pem = applePrivateKeyPEM, (try? ECSigningKey.fromPEM(pem)) == nil {
            found.append(("apple_private_key", "must be an EC private key in PEM (the .p8 file)"))
        }
        for (name, text) in [("apns_team_id", apnsTeamId), ("apns_key_id", apnsKeyId), ("apns_topic", apnsTopic)] {
            if let text, text.utf8.count > 256 || text.contains(where: { $0.isNewline }) {
                found.append((name, "must be at most 256 characters on one line"))
            }
        }
        if let pem = apnsPrivateKeyPEM, (try? ECSigningKey.fromPEM(pem)) == nil {
            found.append(("apns_private_key", "must be an EC private key in PEM (the APNs .p8 file)"))
        }
        if let json = fcmServiceAccountJSON, FCMServiceAccount.parse(json) == nil {
            found.append(("fcm_service_account", "must be a service-account key JSON (project_id, client_email, "
                          + "private_key as an RSA key in PEM, token_uri)"))
        }
        if let url = deepLinkURL, !url.isEmpty {
            let parsed = URL(string: url)
            if url.utf8.count > 2048 || parsed?.scheme == nil || parsed?.host?.isEmpty != false {
                found.append(("deep_link_url", "must be an absolute URL (https://… or an app scheme with a host)"))
            }
        }
        if let address = mailFromAddress, !address.isEmpty, !EmailAddress.isValid(address) {
            found.append(("mail_from_address", "must be a valid email address"))
        }
        if let locale = defaultLocale, !locale.isEmpty, LanguageTag.normalized(locale) == nil {
            found.append(("default_locale", LanguageTag.rule))
        }
        for (target, value) in mailTemplates {
            if Self.templateTarget(target) == nil {
                found.append(("mail_templates", "wants KIND.PART or KIND.PART.LANGUAGE (KIND: \(Self.templateKinds.joined(separator: ", ")); "
                              + "PART: \(Self.templateParts.joined(separator: ", ")), an SMS's only text; LANGUAGE: BCP 47), got \(target)"))
            } else if value.utf8.count > 32 * 1024 {
                found.append(("mail_templates", "\(target) must be at most 32 KiB"))
            }
        }
        for (name, value) in rateLimits.sorted(by: { $0.key < $1.key }) {
            if RateLimitCatalogue.named(name) == nil {
                found.append(("rate_limits", "no limit named \(name) (known: \(RateLimitCatalogue.all.map(\.name).joined(separator: ", ")))"))
            } else if value != "default", RateLimitOverride.parse(value) == nil {
                found.append(("rate_limits", "\(name) wants COUNT/WINDOW (e.g. 1000/1h), default or off, got \(value)"))
            } else if value == "off", !offAllowed {
                found.append(("rate_limits", "\(name)=off is for tests only (set IDENTITY_RATE_LIMIT_OFF_ALLOWED=1)"))
            }
        }
        found += edgeProblems()
        if let metadata = defaultMetadata {
            if case .object(let fields) = metadata, fields.keys.allSatisfy({ ["app_metadata", "user_metadata"].contains($0) }),
               fields.values.allSatisfy({ if case .object = $0 { return true } else { return false } }),
               metadata.serialized.utf8.count <= 16 * 1024, !metadata.serialized.contains("\\u0000") {
            } else {
                found.append(("default_metadata", "must be {\"app_metadata\": {…}, \"user_metadata\": {…}}, at most 16 KiB"))
            }
        }
        let all: [(setting: String, message: String)] = found + sms.problems()
        return all + outboundProblems(skipping: Set(all.map(\.setting)))
    }

    /// The update a JSON body describes (`PATCH /v1/admin/settings`, and the token worker's
    /// command, which carries the body): shape problems by location, as a 422 lists them.
    public static func parse(_ body: JSONValue) -> (AppSettingsUpdate, [ServiceError.FieldProblem]) {
        var update = AppSettingsUpdate()
        var problems: [ServiceError.FieldProblem] = []
        guard case .object(let fields) = body else {
            return (update, [.init(location: "body", message: "must be a JSON object")])
        }
        // Every name read below is a setting; a name none of them reads is refused (a misspelt
        // setting must not be answered 200 and dropped).
        var read: Set<String> = []
        func field(_ key: String) -> JSONValue? {
            read.insert(key)
            return fields[key]
        }
        func integer(_ key: String) -> Int? {
            guard let value = field(key), value != .null else { return nil }
            guard case .number(let number) = value, number.rounded() == number, abs(number) < 1e12 else {
                problems.append(.init(location: "body.\(key)", message: "must be an integer")); return nil
            }
            return Int(number)
        }
        func text(_ key: String) -> String? {
            guard let value = field(key) else { return nil }
            if value == .null { return "" }
            guard case .string(let string) = value, !string.utf8.contains(0) else {
                problems.append(.init(location: "body.\(key)", message: "must be a string")); return nil
            }
            return string
        }
        func list(_ key: String) -> [String]? {
            guard let value = field(key) else { return nil }
            if value == .null { return [] }
            guard case .array(let items) = value else {
                problems.append(.init(location: "body.\(key)", message: "must be a list of strings")); return nil
            }
            var out: [String] = []
            for item in items {
                guard case .string(let string) = item, !string.utf8.contains(0) else {
                    problems.append(.init(location: "body.\(key)", message: "must be a list of strings")); return nil
                }
                out.append(string)
            }
            return out
        }
        func strings(_ key: String) -> [String: String] {
            guard let value = field(key), value != .null else { return [:] }
            guard case .object(let object) = value else {
                problems.append(.init(location: "body.\(key)", message: "must be an object of strings")); return [:]
            }
            var out: [String: String] = [:]
            for (name, item) in object {
                guard case .string(let string) = item, !string.utf8.contains(0), !name.utf8.contains(0) else {
                    problems.append(.init(location: "body.\(key).\(name)", message: "must be a string")); continue
                }
                out[name] = string
            }
            return out
        }
        update.accessTokenTTL = integer("access_token_ttl")
        update.sessionLifetime = integer("session_lifetime")
        update.sessionIdleTimeout = integer("session_idle_timeout")
        update.sessionEndProof = text("session_end_proof").flatMap { $0.isEmpty ? nil : $0 }
        update.googleClientIds = list("google_client_ids")
        update.appleBundleIds = list("apple_bundle_ids")
        update.appleServicesIds = list("apple_services_ids")
        update.appleTeamId = text("apple_team_id")
        update.appleKeyId = text("apple_key_id")
        update.applePrivateKeyPEM = text("apple_private_key").flatMap { $0.isEmpty ? nil : $0 }
        update.firebaseProjectId = text("firebase_project_id")
        if let value = field("firebase_trust_email_verified"), value != .null {
            if case .bool(let flag) = value { update.firebaseTrustEmailVerified = flag } else {
                problems.append(.init(location: "body.firebase_trust_email_verified", message: "must be true or false"))
            }
        }
        update.apnsTeamId = text("apns_team_id")
        update.apnsKeyId = text("apns_key_id")
        update.apnsTopic = text("apns_topic")
        update.apnsPrivateKeyPEM = text("apns_private_key").flatMap { $0.isEmpty ? nil : $0 }
        update.fcmServiceAccountJSON = text("fcm_service_account").flatMap { $0.isEmpty ? nil : $0 }
        if let value = field("security_alerts"), value != .null {
            if case .bool(let flag) = value { update.securityAlerts = flag } else {
                problems.append(.init(location: "body.security_alerts", message: "must be true or false"))
            }
        }
        update.deepLinkURL = text("deep_link_url")
        update.mailFromName = text("mail_from_name")
        update.mailFromAddress = text("mail_from_address")
        update.mailTemplates = strings("mail_templates")
        update.defaultLocale = text("default_locale")
        update.rateLimits = strings("rate_limits")
        if let metadata = field("default_metadata"), metadata != .null { update.defaultMetadata = metadata }
        update.sms = SmsSettingsUpdate.parse(field, problems: &problems, text: text)
        update.profile = text("profile").flatMap { $0.isEmpty ? nil : $0 }
        update.domains = list("domains")
        update.pathPrefix = text("path_prefix")
        update.allowedOrigins = list("allowed_origins")
        update.appleNonce = text("apple_nonce").flatMap { $0.isEmpty ? nil : $0 }
        update.webauthnRpId = text("webauthn_rp_id").flatMap { $0.isEmpty ? nil : $0 }
        update.webauthnOrigins = list("webauthn_origins")
        update.webauthnRpName = text("webauthn_rp_name")
        if let value = field("webauthn_require_uv"), value != .null {
            if case .bool(let flag) = value { update.webauthnRequireUV = flag } else {
                problems.append(.init(location: "body.webauthn_require_uv", message: "must be true or false"))
            }
        }
        update.jwksCacheSeconds = integer("jwks_cache_seconds")
        update.failedSignInAuditThreshold = integer("failed_sign_in_audit_threshold")
        for name in fields.keys.sorted() where !read.contains(name) {
            problems.append(.init(location: "body.\(name)", message: "is not a setting"))
        }
        return (update, problems)
    }
}
