import IdentityKit

/// The Settings page's sections, each a table of its settings (names and rules are the admin
/// API's: `AppSettingsUpdate`). The mail templates have their own editor
/// (ConsoleMailTemplates.swift) under the Mail section.
enum ConsoleSettingsSections {
    typealias Field = ConsoleSettingField

    static let all: [ConsoleSettingsSection] = [providers, mail, sms, push, passkeys, clients, tokens, rateLimits, security]

    static func named(_ id: String) -> ConsoleSettingsSection? { all.first { $0.id == id } }

    static let providers = ConsoleSettingsSection(
        id: "providers", title: "Sign-in providers",
        intro: "Which Google, Apple and Firebase apps may sign your users in.",
        fields: [
            Field(name: "google_client_ids", label: "Google client IDs",
                  hint: "Paste each OAuth client ID on its own line: web, iOS and Android (Google Cloud console → Credentials). "
                      + "A Google id token is accepted when its audience is one of these.", kind: .lines),
            Field(name: "apple_bundle_ids", label: "Apple bundle IDs",
                  hint: "Your iOS apps' bundle IDs, one a line (Sign in with Apple on iOS).", kind: .lines),
            Field(name: "apple_services_ids", label: "Apple Services IDs",
                  hint: "Services IDs for Sign in with Apple on the web, one a line.", kind: .lines),
            Field(name: "apple_team_id", label: "Apple team ID", hint: "The 10-character team ID of your Apple developer account.",
                  kind: .text),
            Field(name: "apple_key_id", label: "Apple key ID", hint: "The ID of the Sign in with Apple key (.p8) below.", kind: .text),
            Field(name: "apple_private_key", label: "Apple private key (.p8)",
                  hint: "Upload or paste the .p8 file. It is stored sealed and never shown again; leave empty to keep the one set.",
                  kind: .secret(stateKey: "apple_private_key_set", accept: ".p8,.pem,text/plain")),
            Field(name: "firebase_project_id", label: "Firebase project ID", hint: "For apps whose clients sign in with Firebase.",
                  kind: .text),
            Field(name: "firebase_trust_email_verified", label: "Trust Firebase's verified emails",
                  hint: "Take a Firebase user's email as verified when Firebase says it is.", kind: .flag),
        ])

    static let mail = ConsoleSettingsSection(
        id: "mail", title: "Mail",
        intro: "Who your users' mails come from and in which language they are written when the user's is unknown.",
        fields: [
            Field(name: "mail_from_name", label: "Sender name", hint: "Shown as the mail's sender, such as your app's name.",
                  kind: .text),
            Field(name: "mail_from_address", label: "Sender address",
                  hint: "The From address; empty: the service's own sender. Your mail domain must allow the service to send for it.",
                  kind: .text),
            Field(name: "default_locale", label: "Default language",
                  hint: "A BCP 47 tag such as en, de, pt-BR: the language of messages to users whose own language has no texts; "
                      + "empty: English. Texts without a language below are in this language.", kind: .text),
        ])

    static let sms = ConsoleSettingsSection(
        id: "sms", title: "SMS",
        intro: "Phone sign-in's texts: which countries may get them and, optionally, your own Twilio-compatible account "
            + "(without one, the operator's shared account sends them).",
        fields: [
            Field(name: "sms_allowed_calling_codes", label: "Allowed calling codes",
                  hint: "Country calling codes that may get a text, separated by commas, such as 33, 44, 1.", kind: .codes),
            Field(name: "sms_breaker_hourly", label: "Breaker: texts an hour",
                  hint: "When the app sends more texts than this in an hour, sending stops until the hour is over "
                      + "(protects your bill from SMS pumping).", kind: .integer(unit: "texts an hour")),
            Field(name: "sms_api_url", label: "SMS API URL", hint: "Your provider's API, such as https://api.twilio.com.", kind: .text),
            Field(name: "sms_account_sid", label: "Account SID", hint: "Your provider account's ID (AC…).", kind: .text),
            Field(name: "sms_auth_token", label: "Auth token",
                  hint: "The account's auth token. Stored sealed and never shown again; leave empty to keep the one set.",
                  kind: .secret(stateKey: "sms_auth_token_set", accept: ".txt,text/plain")),
            Field(name: "sms_from", label: "Sender", hint: "The number texts come from (E.164, such as +15551234567) or an "
                      + "alphanumeric sender ID.", kind: .text),
            Field(name: "sms_messaging_service_sid", label: "Messaging service SID",
                  hint: "Instead of a sender: the provider's messaging service (MG…) that picks one.", kind: .text),
        ])

    static let push = ConsoleSettingsSection(
        id: "push", title: "Push notifications",
        intro: "The credentials that send security alerts to your users' devices: Apple (APNs) for iOS, Firebase (FCM) for Android.",
        fields: [
            Field(name: "apns_team_id", label: "APNs team ID", hint: "The 10-character team ID of your Apple developer account.",
                  kind: .text),
            Field(name: "apns_key_id", label: "APNs key ID", hint: "The ID of the APNs key (.p8) below.", kind: .text),
            Field(name: "apns_topic", label: "APNs topic", hint: "Your iOS app's bundle ID, such as com.example.app.", kind: .text),
            Field(name: "apns_private_key", label: "APNs key (.p8)",
                  hint: "Upload or paste the APNs .p8 file. Stored sealed and never shown again; leave empty to keep the one set.",
                  kind: .secret(stateKey: "apns_private_key_set", accept: ".p8,.pem,text/plain")),
            Field(name: "fcm_service_account", label: "FCM service account (JSON)",
                  hint: "Firebase console → Project settings → Service accounts → Generate new private key. Stored sealed and "
                      + "never shown again; leave empty to keep the one set.",
                  kind: .secret(stateKey: "fcm_service_account_set", accept: ".json,application/json")),
        ],
        facts: { settings in
            guard case .string(let project)? = settings["fcm_project_id"] else { return [] }
            return ["FCM project of the service account set: " + project]
        })

    static let passkeys = ConsoleSettingsSection(
        id: "passkeys", title: "Passkeys",
        intro: "Where your users' passkeys work: set the relying party ID first.",
        fields: [
            Field(name: "webauthn_rp_id", label: "Relying party ID",
                  hint: "Your site's domain, such as example.com (no scheme, no port). Passkeys are bound to it: changing it later "
                      + "leaves the existing ones unusable.", kind: .text),
            Field(name: "webauthn_rp_name", label: "Relying party name", hint: "Shown by the device when it offers a passkey.",
                  kind: .text),
            Field(name: "webauthn_origins", label: "Origins",
                  hint: "Each web origin (https://app.example.com) or Android app origin (android:apk-key-hash:…) that uses "
                      + "passkeys, one a line; each must be the relying party ID or under it.", kind: .lines),
            Field(name: "webauthn_require_uv", label: "Require user verification",
                  hint: "Accept only passkeys used with the device's PIN, fingerprint or face.", kind: .flag),
        ])

    static let clients = ConsoleSettingsSection(
        id: "clients", title: "Clients & domains",
        intro: "How your apps and web pages reach the service.",
        fields: [
            Field(name: "profile", label: "Client profile",
                  hint: "What your clients expect back from a sign-in (docs/client-profiles.md).",
                  kind: .choice([("standard", "standard: access and refresh tokens"),
                                 ("single-token", "single-token: one session token"),
                                 ("session-object", "session-object: a session object, cookie for browsers")])),
            Field(name: "domains", label: "Domains",
                  hint: "Your own hosts for the API (api.example.com, or host:port), one a line. A new host works once "
                      + "verified: publish the token shown below at its well-known address.", kind: .lines),
            Field(name: "path_prefix", label: "Path prefix",
                  hint: "Also serve the API under this path, such as /auth (not under /v1, /api/docs or /.well-known); empty: /v1 only.",
                  kind: .text),
            Field(name: "allowed_origins", label: "Allowed browser origins",
                  hint: "Web pages that may call the API from a browser, exactly as https://app.example.com (no path, no "
                      + "wildcard), one a line.", kind: .lines),
            Field(name: "apple_nonce", label: "Apple nonce",
                  hint: "Who makes the nonce of Sign in with Apple.",
                  kind: .choice([("issued", "issued: the service gives one out (recommended)"),
                                 ("client", "client: your app makes its own"),
                                 ("none", "none: older clients that send no nonce")])),
            Field(name: "deep_link_url", label: "Deep-link URL",
                  hint: "Where links in mails lead (sign in, reset password, verify email), such as https://app.example.com/auth "
                      + "or myapp://auth; empty: mails carry only the code.", kind: .text),
        ],
        facts: { settings in
            guard case .object(let pending)? = settings["domains_pending"] else { return [] }
            return pending.keys.sorted().map { host in
                let token: String = if case .string(let text)? = pending[host] { text } else { "" }
                return "\(host) waits for verification: publish \(token) at https://\(host)/.well-known/identity-domain-verification"
            }
        })

    static let tokens = ConsoleSettingsSection(
        id: "tokens", title: "Tokens & sessions",
        intro: "How long a sign-in lasts. All in seconds (3600 is an hour, 86400 a day).",
        fields: [
            Field(name: "access_token_ttl", label: "Access-token lifetime",
                  hint: "300 to 86400 seconds. Applies to tokens issued from now on.", kind: .integer(unit: "seconds")),
            Field(name: "session_lifetime", label: "Session lifetime",
                  hint: "3600 to 315360000 seconds: how long a session lasts before the user signs in again.",
                  kind: .integer(unit: "seconds")),
            Field(name: "session_idle_timeout", label: "Idle timeout",
                  hint: "300 to 31536000 seconds: a session-token session unused this long ends (single-token and "
                      + "session-object profiles).", kind: .integer(unit: "seconds")),
            Field(name: "session_end_proof", label: "Ending other sessions",
                  hint: "What a user must show to end another of their sessions, or all of them.",
                  kind: .choice([("none", "none: a live session is enough"),
                                 ("fresh", "fresh: a sign-in within the last 5 minutes")])),
            Field(name: "jwks_cache_seconds", label: "JWKS cache",
                  hint: "1 to 86400 seconds: how long verifiers may cache your signing keys; a new key starts signing "
                      + "one such period after it is published.", kind: .integer(unit: "seconds")),
        ])

    static let rateLimits = ConsoleSettingsSection(
        id: "rate-limits", title: "Rate limits",
        intro: "How many requests each limit lets through: COUNT/WINDOW (10/15m, 100/60s, 5/1h, 1/1d), default for the "
            + "service's own, or off where the operator allows it. The operator's ceilings apply.",
        fields: RateLimitCatalogue.all.map { policy in
            Field(name: "rate_limits", label: policy.name, hint: ConsoleRateLimitHints.hint(policy.name), kind: .rateLimit(policy))
        })

    static let security = ConsoleSettingsSection(
        id: "security", title: "Security",
        intro: "What your users and your audit log hear about.",
        fields: [
            Field(name: "security_alerts", label: "Security alerts",
                  hint: "Tell users by mail (and push, when set up) about a new-device sign-in, a changed password or email, "
                      + "two-step verification turned on or off, and the like.", kind: .flag),
            Field(name: "failed_sign_in_audit_threshold", label: "Failed sign-ins before an audit entry",
                  hint: "1 to 1000: this many failed sign-ins of one account or address within 15 minutes make an entry in "
                      + "the audit log.", kind: .integer(unit: "failures")),
            Field(name: "default_metadata", label: "New users' metadata",
                  hint: "Given to every new user, as JSON: {\"app_metadata\": {…}, \"user_metadata\": {…}}; at most 16 KiB.",
                  kind: .json),
        ])
}

/// What each rate limit counts, for the Rate limits section.
enum ConsoleRateLimitHints {
    static func hint(_ name: String) -> String { hints[name] ?? "" }

    static let hints: [String: String] = [
        "sign_in_per_ip": "Sign-ins from one address.",
        "sign_in_per_identifier": "Wrong passwords for one account.",
        "sign_in_per_device": "Sign-ins of a known device once the account's budget is spent.",
        "sign_up_per_ip": "Sign-ups from one address.",
        "guest_per_ip": "Guest accounts from one address.",
        "nonce_per_ip": "Sign-in nonces (Apple, Google) from one address.",
        "refresh_per_ip": "Token refreshes from one address.",
        "code_send_per_ip": "Mailed codes (sign-in, reset, verification) asked from one address.",
        "code_send_per_address": "Mailed codes sent to one email address.",
        "code_resend_per_address": "How soon a code may be sent again to one address.",
        "code_verify_per_ip": "Code checks from one address.",
        "code_guess_per_address": "Wrong codes for one email address.",
        "password_check_per_user": "Current-password checks of a signed-in user.",
        "admin_per_app": "Admin API calls of your backend.",
        "mfa_guess_per_user": "Wrong two-step verification codes of one user.",
        "mfa_verify_per_ip": "Two-step verification checks from one address.",
        "passkey_options_per_ip": "Passkey sign-in starts from one address.",
        "sms_send_per_number": "Texts to one phone number.",
        "sms_resend_per_number": "How soon a text may be sent again to one number.",
        "sms_send_per_ip": "Texts asked from one address.",
        "sms_send_per_app": "Texts of the whole app.",
        "graphql_per_ip": "GraphQL requests from one address.",
        "apple_notifications_per_app": "Apple's server-to-server notifications.",
        "console_sign_in_per_ip": "Console sign-ins from one address (for the console app).",
        "console_post_per_ip": "Console forms from one address (for the console app).",
        "console_post_per_account": "Console forms of one console account (for the console app).",
        "console_invite_per_account": "Member invitations sent by one console account (for the console app).",
    ]
}
