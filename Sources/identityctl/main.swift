import Foundation
import IdentityCredentials
import IdentityKit

// identityctl: operator commands. Every command prints JSON (or a short line) on stdout and
// exits non-zero with a message on stderr when it fails: 2 for arguments it does not take
// (CommandLineRules), 1 for a command that could not do its work. `--help` exits 0.

let usage = """
    usage:
      identityctl migrate
      identityctl apps create --name NAME [--access-token-ttl SECONDS] [--alg RS256|ES256|EdDSA]
      identityctl apps list           every app: id, name, app key, issuer, access-token lifetime
      identityctl apps settings APP_ID [--access-token-ttl SECONDS] [--google-client-ids ID,ID] [--apple-bundle-ids ID,ID]
          [--apple-services-ids ID,ID] [--apple-team-id ID] [--apple-key-id ID]
          [--apple-private-key-file KEY.p8] [--firebase-project-id ID] [--firebase-trust-email-verified true|false]
          [--deep-link-url URL] [--mail-from-name NAME] [--mail-from-address ADDRESS]
          [--mail-template KIND.PART[.LANGUAGE]=VALUE]...   (KIND: \(AppSettingsUpdate.templateKinds.joined(separator: ", "));
              PART: subject, text, html, push_title, push_body; an SMS has only text; LANGUAGE: BCP 47, e.g. pt-BR)
          [--default-locale LANGUAGE]   (BCP 47: messages to users whose language has no texts; default en)
          [--apns-team-id ID] [--apns-key-id ID] [--apns-topic BUNDLE_ID] [--apns-private-key-file KEY.p8]
          [--fcm-service-account-file KEY.json] [--security-alerts true|false]   (push and alerts; see docs/)
          [--webauthn-rp-id ID --webauthn-origins ORIGIN,ORIGIN]   (https://HOST[:PORT] or
              android:apk-key-hash:HASH) [--webauthn-rp-name NAME] [--webauthn-require-uv true|false]
          [--sms-allowed-calling-codes 33,44,1] [--sms-breaker-hourly COUNT] [--sms-api-url URL]
          [--sms-account-sid SID] [--sms-auth-token-file FILE] [--sms-from +E164|NAME]
          [--sms-messaging-service-sid SID]   (phone sign-in: docs/flows.md, "Phone sign-in and SMS")
          [--session-lifetime SECONDS]   (absolute, 3600 to 315360000; default 31536000 = 365 days)
          [--session-idle-timeout SECONDS]   (session-object and single-token sessions unused this long
              end; 300 to 31536000; default 2592000 = 30 days)
          [--session-end-proof none|fresh]   (fresh: ending another session or all of them takes a
              sign-in within 5 minutes)
          [--jwks-cache-seconds SECONDS]   (JWKS max-age and a new key's lead before it signs, 1 to 86400; default 300)
          [--default-metadata '{"app_metadata":{…},"user_metadata":{…}}']   (what new users start with)
          [--rate-limit NAME=COUNT/WINDOW|NAME=default|NAME=off]...   (WINDOW: 30s, 15m, 1h, 1d;
          off only with IDENTITY_RATE_LIMIT_OFF_ALLOWED=1, for tests; NAME: see docs/)
          [--profile standard|single-token|session-object] [--domains HOST,HOST] [--path-prefix /api/v2]
          [--allowed-origins https://a.example,…] [--apple-nonce issued|client|none]   (client profiles;
          an empty value clears a list or the prefix; see docs/)
          [--failed-sign-in-audit-threshold N]   (failed sign-ins of one account or IP in 15 minutes
              that make an audit row, 1 to 1000; default 5)
      identityctl apps domains verify APP_ID DOMAIN
                                      marks a domain the app requested (admin API settings "domains")
                                      verified once https://DOMAIN/.well-known/identity-domain-verification
                                      holds its token (domains_pending); only verified domains select
                                      the app by Host (--domains above allows hosts without a proof)
      identityctl apps rotate-secret-key APP_ID [--overlap SECONDS]
                                      a new secret key (shown once); the live ones keep working for
                                      SECONDS (default 86400, at most 2592000; 0: they stop now)
      identityctl keys rotate APP_ID [--alg RS256|ES256|EdDSA]
                                      adds the next signing key (published now, signing one JWKS cache
                                      period later); the current key retires when its tokens have expired
      identityctl keys list APP_ID    the app's keys and their states (next, current, previous, retired)
      identityctl hooks set APP_ID KIND --url URL [--timeout-ms 100..3000] [--failure-policy fail_closed|fail_open]
          [--rotate-secret]           an auth hook (KIND: before_sign_up, before_token, send_email, send_sms;
                                      docs/hooks.md); a new hook's secret is printed this once
      identityctl hooks list APP_ID   the app's auth hooks (never their secrets)
      identityctl hooks delete APP_ID KIND
      identityctl users import APP_ID FILE.jsonl [--allow-weak-hashes]
                                      imports users, one JSON object a line (docs/flows.md, "Importing users"),
                                      with their password hashes and provider identities; each line
                                      all or nothing; prints a report by line, exits 1 if any failed
      identityctl mail replay-dead [--channel email|push|sms]
                                      moves a channel's dead letters (default: every channel, and the
                                      previous version's identity.mailer.dead into email) back to its queue
      identityctl phone normalize     COUNTRY<TAB>NUMBER lines on stdin → E.164 (or -) on stdout
      identityctl keys push-credential-key
                                      the key mailer workers get to open apps' push credentials
                                      (IDENTITY_PUSH_CREDENTIAL_KEY), derived from IDENTITY_MASTER_KEY
      identityctl keys webhook-secret-key
                                      the key webhook workers get to open the endpoints' secrets
                                      (IDENTITY_WEBHOOK_SECRET_KEY), derived from IDENTITY_MASTER_KEY
      identityctl console init [--origin https://HOST[:PORT]] [--name NAME] [--require-mfa on|off]
                                      makes the web console's app (session-object, its one allowed origin
                                      the console's; default IDENTITY_PUBLIC_BASE_URL), once; serves /console;
                                      console accounts need two-step verification or a passkey (default on)
      identityctl console require-mfa on|off
                                      whether console sessions need two-step verification or a passkey
      identityctl console invite --app APP_ID --email EMAIL --role owner|admin|viewer
                                      gives EMAIL that role in the app's console (docs/console.md); it counts
                                      once a console user with that email has verified it
      identityctl webhooks list APP_ID
      identityctl webhooks create APP_ID --url URL [--events NAME,NAME|*] [--description TEXT]
                                      a webhook endpoint for the app's events (docs/webhooks.md); its
                                      secret is printed once
      identityctl webhooks delete APP_ID WEBHOOK_ID
      identityctl webhooks rotate-secret APP_ID WEBHOOK_ID [--overlap SECONDS]
                                      a new secret (printed once); the previous one signs too for
                                      SECONDS (default 86400, at most 604800)
      identityctl keys mail-payload-key
                                      the key mailer workers get (IDENTITY_MAIL_PAYLOAD_KEY), derived
                                      from IDENTITY_MASTER_KEY: mailers never hold the master key
      identityctl keys reseal         once after upgrading, as the database owner: reseals rows sealed
                                      with the master key itself under their sub-keys (idempotent)
      identityctl bench argon2|bus|broker|signing [--seconds S] [--threads N] [--concurrency N]
                                      the machine's limits for make bench (JSON)

    environment: IDENTITY_DATABASE_URL, IDENTITY_MIGRATIONS_DIR (migrate),
                 IDENTITY_MASTER_KEY (apps create, keys rotate, and apps settings with a .p8 key),
                 IDENTITY_PUBLIC_BASE_URL (apps create), IDENTITY_AMQP_URL and
                 IDENTITY_AMQP_HEARTBEAT_SECONDS (mail replay-dead, bench),
                 IDENTITY_SMS_SHARED_CALLING_CODES (apps settings: the calling codes apps without an
                 SMS account of their own may allow), IDENTITY_DOMAIN_VERIFICATION_URL_TEMPLATE
                 (apps domains verify; default https://{domain}/.well-known/identity-domain-verification)
    """

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("identityctl: \(message)\n".utf8))
    exit(1)
}

/// The value after `--name` in `arguments`, if any.
func option(_ name: String, in arguments: [String]) -> String? {
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}

/// Every value given for a repeatable option.
func options(_ name: String, in arguments: [String]) -> [String] {
    arguments.indices.filter { arguments[$0] == name && $0 + 1 < arguments.count }.map { arguments[$0 + 1] }
}

func printJSON(_ object: [String: Any]) {
    guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]) else {
        fail("could not encode output")
    }
    print(String(decoding: data, as: UTF8.self))
}

let arguments = Array(CommandLine.arguments.dropFirst())
if CommandLineRules.wantsHelp(arguments) {
    print(usage)
    exit(0)
}
if let problem = CommandLineRules.problem(with: arguments) {
    FileHandle.standardError.write(Data("identityctl: \(problem)\nidentityctl --help shows every command and flag\n".utf8))
    exit(2)
}
// What the shared code logs (a warning on stderr) follows IDENTITY_LOG_FORMAT, as in the services.
CommonConfiguration.applyLogSettingsFromEnvironment()
var env = EnvironmentReader()
let common = CommonConfiguration(reading: &env, defaultPoolSize: 1, needsBroker: false)
/// The broker's URL, for the commands that use the bus (the others run without one).
var brokerURL: String {
    if common.amqpURL.isEmpty { fail("this command uses the broker: set IDENTITY_AMQP_URL (or IDENTITY_AMQP_URL_FILE)") }
    return common.amqpURL
}
// `apps settings` holds the URLs an app sets to the same policy as the admin API.
OutboundAddressPolicy.setCurrent(common.outboundAddresses)

switch (arguments.first, arguments.dropFirst().first) {
case ("migrate", _):
    env.validateOrExit(program: "identityctl")
    let directory = URL(fileURLWithPath: env.string("IDENTITY_MIGRATIONS_DIR", default: "migrations"))
    do {
        let applied = try Migrator(pool: PGPool(url: common.databaseURL, size: 1), directory: directory).migrate()
        print(applied.isEmpty ? "migrate: up to date" : "migrate: applied \(applied.map(String.init).joined(separator: ", "))")
    } catch {
        fail("migrate failed: \(error)")
    }

case ("apps", "create"):
    let rest = Array(arguments.dropFirst(2))
    guard let name = option("--name", in: rest), !name.isEmpty else { fail("apps create needs --name NAME\n\(usage)") }
    let ttlText = option("--access-token-ttl", in: rest) ?? "3600"
    guard let ttl = Int(ttlText), (300...86_400).contains(ttl) else {
        fail("--access-token-ttl must be 300 to 86400 seconds (5 minutes to 24 hours)")
    }
    guard let algorithm = SigningAlgorithm(rawValue: option("--alg", in: rest) ?? "RS256") else {
        fail("--alg must be RS256, ES256 or EdDSA")
    }
    let masterKey = env.key32("IDENTITY_MASTER_KEY", required: true)
    let baseURL = env.string("IDENTITY_PUBLIC_BASE_URL", default: "http://127.0.0.1:8080")
    env.validateOrExit(program: "identityctl")
    do {
        let created = try AppStore(pool: PGPool(url: common.databaseURL, size: 1))
            .create(name: name, accessTokenTTL: ttl, publicBaseURL: baseURL, masterKey: masterKey ?? [], algorithm: algorithm)
        printJSON(["app_id": created.app.id, "name": created.app.name, "app_key": created.app.appKey,
                   "secret_key": created.secretKey, "issuer": created.app.issuer,
                   "access_token_ttl": created.app.accessTokenTTL])
    } catch {
        fail("apps create failed: \(error)")
    }

case ("apps", "list"):
    env.validateOrExit(program: "identityctl")
    do {
        let apps = try AppStore(pool: PGPool(url: common.databaseURL, size: 1)).list()
        printJSON(["apps": apps.map { ["app_id": $0.id, "name": $0.name, "app_key": $0.appKey, "issuer": $0.issuer,
                                       "access_token_ttl": $0.accessTokenTTL] }])
    } catch {
        fail("apps list failed: \(error)")
    }

case ("apps", "settings"):
    // Flags become an AppSettingsUpdate: the rules and writes are the admin API's own
    // (PATCH /v1/admin/settings), not a second implementation.
    let rest = Array(arguments.dropFirst(2))
    guard let appId = rest.first, !appId.hasPrefix("--") else { fail("apps settings needs APP_ID\n\(usage)") }
    let keyFile = option("--apple-private-key-file", in: rest)
    let smsTokenFile = option("--sms-auth-token-file", in: rest)
    let apnsKeyFile = option("--apns-private-key-file", in: rest)
    let fcmFile = option("--fcm-service-account-file", in: rest)
    let masterKey = env.key32("IDENTITY_MASTER_KEY", required: keyFile != nil || apnsKeyFile != nil || fcmFile != nil
                                                          || smsTokenFile != nil)
    let offAllowed = env.string("IDENTITY_RATE_LIMIT_OFF_ALLOWED", default: "") == "1"
    // The operator: not held to the ceilings it sets, but to its shared SMS account's codes.
    let operatorLimits = OperatorLimits.fromEnvironment(&env)
    env.validateOrExit(program: "identityctl")
    var update = AppSettingsUpdate()
    let integer = { (flag: String, setting: String) -> Int? in
        guard let text = option(flag, in: rest) else { return nil }
        guard let value = Int(text) else {
            fail("\(flag) \(AppSettingsUpdate.describe(setting))")
        }
        return value
    }
    update.accessTokenTTL = integer("--access-token-ttl", "access_token_ttl")
    update.sessionLifetime = integer("--session-lifetime", "session_lifetime")
    update.sessionIdleTimeout = integer("--session-idle-timeout", "session_idle_timeout")
    update.sessionEndProof = option("--session-end-proof", in: rest)
    let list = { (name: String) in option(name, in: rest).map { $0.split(separator: ",").map(String.init) } }
    update.googleClientIds = list("--google-client-ids")
    update.appleBundleIds = list("--apple-bundle-ids")
    update.appleServicesIds = list("--apple-services-ids")
    update.appleTeamId = option("--apple-team-id", in: rest)
    update.appleKeyId = option("--apple-key-id", in: rest)
    update.firebaseProjectId = option("--firebase-project-id", in: rest)
    if let trust = option("--firebase-trust-email-verified", in: rest) {
        guard trust == "true" || trust == "false" else { fail("--firebase-trust-email-verified wants true or false") }
        update.firebaseTrustEmailVerified = trust == "true"
    }
    if let keyFile {
        do {
            update.applePrivateKeyPEM = try String(contentsOfFile: keyFile, encoding: .utf8)
        } catch {
            fail("--apple-private-key-file: cannot read \(keyFile): \(error)")
        }
    }
    if let codes = option("--sms-allowed-calling-codes", in: rest) {
        guard let parsed = codes.isEmpty ? [] : SmsSettingsUpdate.parseCodes(codes) else {
            fail("--sms-allowed-calling-codes wants calling codes separated by commas (33,44,1)")
        }
        update.sms.allowedCallingCodes = parsed
    }
    update.sms.breakerHourly = integer("--sms-breaker-hourly", "sms_breaker_hourly")
    update.sms.apiURL = option("--sms-api-url", in: rest)
    update.sms.accountSid = option("--sms-account-sid", in: rest)
    update.sms.fromNumber = option("--sms-from", in: rest)
    update.sms.messagingServiceSid = option("--sms-messaging-service-sid", in: rest)
    if let smsTokenFile {
        do {
            update.sms.authToken = try String(contentsOfFile: smsTokenFile, encoding: .utf8)
                .trimmingCharacters(in: .whitespacesAndNewlines)
        } catch {
            fail("--sms-auth-token-file: cannot read \(smsTokenFile): \(error)")
        }
    }
    update.apnsTeamId = option("--apns-team-id", in: rest)
    update.apnsKeyId = option("--apns-key-id", in: rest)
    update.apnsTopic = option("--apns-topic", in: rest)
    for (flag, file) in [("--apns-private-key-file", apnsKeyFile), ("--fcm-service-account-file", fcmFile)] {
        guard let file else { continue }
        guard let text = try? String(contentsOfFile: file, encoding: .utf8) else { fail("\(flag): cannot read \(file)") }
        if flag == "--apns-private-key-file" { update.apnsPrivateKeyPEM = text } else { update.fcmServiceAccountJSON = text }
    }
    if let alerts = option("--security-alerts", in: rest) {
        guard alerts == "true" || alerts == "false" else { fail("--security-alerts wants true or false") }
        update.securityAlerts = alerts == "true"
    }
    update.deepLinkURL = option("--deep-link-url", in: rest)
    update.mailFromName = option("--mail-from-name", in: rest)
    update.mailFromAddress = option("--mail-from-address", in: rest)
    update.defaultLocale = option("--default-locale", in: rest)
    for template in options("--mail-template", in: rest) {
        guard let equals = template.firstIndex(of: "=") else { fail("--mail-template wants KIND.PART[.LANGUAGE]=VALUE, got \(template)") }
        update.mailTemplates[String(template[..<equals])] = String(template[template.index(after: equals)...])
    }
    for flag in options("--rate-limit", in: rest) {
        guard let equals = flag.firstIndex(of: "=") else { fail("--rate-limit wants NAME=COUNT/WINDOW, got \(flag)") }
        update.rateLimits[String(flag[..<equals])] = String(flag[flag.index(after: equals)...])
    }
    if let text = option("--default-metadata", in: rest) {
        guard let value = JSONValue.parse(Data(text.utf8)) else { fail("--default-metadata wants a JSON object") }
        update.defaultMetadata = value
    }
    // How clients reach the app (docs/client-profiles.md, "App settings") and its passkey relying
    // party; an empty value clears a list, the prefix or the relying party's name.
    update.profile = option("--profile", in: rest)
    update.domains = list("--domains").map { $0.map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty } }
    update.pathPrefix = option("--path-prefix", in: rest)
    update.allowedOrigins = list("--allowed-origins").map { $0.map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty } }
    update.appleNonce = option("--apple-nonce", in: rest)
    update.webauthnRpId = option("--webauthn-rp-id", in: rest)
    update.webauthnOrigins = list("--webauthn-origins")
    update.webauthnRpName = option("--webauthn-rp-name", in: rest)
    if let requireUV = option("--webauthn-require-uv", in: rest) {
        guard requireUV == "true" || requireUV == "false" else { fail("--webauthn-require-uv wants true or false") }
        update.webauthnRequireUV = requireUV == "true"
    }
    let whole = { (flag: String) -> Int? in
        guard let text = option(flag, in: rest) else { return nil }
        guard let value = Int(text) else { fail("\(flag) wants a whole number") }
        return value
    }
    update.jwksCacheSeconds = whole("--jwks-cache-seconds")
    update.failedSignInAuditThreshold = whole("--failed-sign-in-audit-threshold")
    if let problem = update.problems(offAllowed: offAllowed).first {
        fail("\(AppSettingsUpdate.flag(problem.setting)) \(problem.message)")
    }
    do {
        let pool = PGPool(url: common.databaseURL, size: 1)
        guard let summary = try update.apply(appId: appId, pool: pool,
                                             masterKey: masterKey, offAllowed: offAllowed,
                                             authority: .operator(operatorLimits)) else { fail("no app \(appId)") }
        print(summary.serialized)
    } catch let error as ServiceError where error.code == "auth/validation-failed" {
        // A rule that needs what is stored (a domain another app holds, passkey origins
        // outside the stored relying party): the same message the admin API gives.
        let lines = error.errors.map { problem in
            AppSettingsUpdate.flag(String(problem.location.dropFirst("body.".count))) + " " + problem.message
        }
        fail(lines.joined(separator: "\n"))
    } catch {
        fail("apps settings failed: \(error)")
    }

case ("apps", "domains"):
    let rest = Array(arguments.dropFirst(2))
    guard rest.count == 3, rest[0] == "verify" else { fail("apps domains verify needs APP_ID DOMAIN\n\(usage)") }
    // The file's URL; tests serve it from a local server over plain http.
    let template = env.string("IDENTITY_DOMAIN_VERIFICATION_URL_TEMPLATE", default: DomainVerification.defaultTemplate)
    if !DomainVerification.isValid(template: template) {
        env.fail("IDENTITY_DOMAIN_VERIFICATION_URL_TEMPLATE=\(template) must be an http(s) URL with {domain}")
    }
    env.validateOrExit(program: "identityctl")
    do {
        switch try DomainVerification.verify(appId: rest[1], domain: rest[2], template: template,
                                             pool: PGPool(url: common.databaseURL, size: 1)) {
        case .verified(let url, let already):
            printJSON(["app_id": rest[1], "domain": rest[2].lowercased(), "verified": true, "url": url,
                       "already_verified": already])
        case .refused(let reason):
            fail("apps domains verify: \(reason)")
        }
    } catch {
        fail("apps domains verify failed: \(error)")
    }

case ("apps", "rotate-secret-key"):
    // The same rotation as POST /v1/admin/secret-keys/rotate: a new key, shown once; the keys
    // live now keep working for --overlap seconds (default 1 day; 0: they stop at once).
    let rest = Array(arguments.dropFirst(2))
    guard let appId = rest.first, !appId.hasPrefix("--") else { fail("apps rotate-secret-key needs APP_ID\n\(usage)") }
    let overlapRange = GatewayV1.RotateSecretKeyRequest.overlapSecondsRange
    guard let overlap = Int(option("--overlap", in: rest) ?? String(GatewayV1.RotateSecretKeyRequest.overlapSecondsDefault)),
          overlapRange.contains(overlap) else {
        fail("--overlap must be \(overlapRange.lowerBound) to \(overlapRange.upperBound) seconds (30 days)")
    }
    env.validateOrExit(program: "identityctl")
    do {
        guard let rotation = try SecretKeyStore(pool: PGPool(url: common.databaseURL, size: 1))
            .rotate(appId: appId, overlapSeconds: overlap) else { fail("no app \(appId)") }
        printJSON(["key_id": rotation.keyId, "secret_key": rotation.secretKey,
                   "previous_key_ids": rotation.previousKeyIds,
                   "previous_keys_expire_at": rotation.previousKeyIds.isEmpty
                       ? NSNull() : Timestamp.rfc3339(microsecondsSinceEpoch: rotation.previousKeysExpireAtMicros)])
    } catch {
        fail("apps rotate-secret-key failed: \(error)")
    }

case ("keys", "mail-payload-key"):
    // What mailer workers get instead of the master key (IDENTITY_MAIL_PAYLOAD_KEY).
    let masterKey = env.key32("IDENTITY_MASTER_KEY", required: true)
    env.validateOrExit(program: "identityctl")
    print(Hex.encode(MailPayloadSeal(masterKey: masterKey ?? []).keyBytes))

case ("keys", "push-credential-key"):
    // What mailer workers get to open apps' push credentials (IDENTITY_PUSH_CREDENTIAL_KEY).
    let masterKey = env.key32("IDENTITY_MASTER_KEY", required: true)
    env.validateOrExit(program: "identityctl")
    print(Hex.encode(SubKey.pushCredentialSeal.derive(from: masterKey ?? [])))

case ("keys", "webhook-secret-key"):
    // What webhook workers get to open the endpoints' secrets (IDENTITY_WEBHOOK_SECRET_KEY).
    let masterKey = env.key32("IDENTITY_MASTER_KEY", required: true)
    env.validateOrExit(program: "identityctl")
    print(Hex.encode(SubKey.webhookSecretSeal.derive(from: masterKey ?? [])))

case ("webhooks", _):
    webhookCommand(arguments, env: &env, common: common)

case ("console", _):
    consoleCommand(arguments, env: &env, common: common)

case ("keys", "reseal"):
    // Once after upgrading from a version that sealed rows with the master key itself
    // (LegacySealUpgrade); run with the owner's database URL, as migrate is.
    let masterKey = env.key32("IDENTITY_MASTER_KEY", required: true)
    env.validateOrExit(program: "identityctl")
    do {
        let counts = try LegacySealUpgrade(pool: PGPool(url: common.databaseURL, size: 1), masterKey: masterKey ?? []).run()
        printJSON(["signing_keys": counts.signingKeys, "apple_private_keys": counts.applePrivateKeys,
                   "apple_refresh_tokens": counts.appleRefreshTokens])
    } catch {
        fail("keys reseal failed: \(error)")
    }

case ("hooks", let verb?) where ["set", "list", "delete"].contains(verb):
    let rest = Array(arguments.dropFirst(2))
    guard let appId = rest.first, !appId.hasPrefix("--") else { fail("hooks \(verb) needs APP_ID\n\(usage)") }
    let masterKey = verb == "set" ? env.key32("IDENTITY_MASTER_KEY", required: true) : nil
    env.validateOrExit(program: "identityctl")
    let pool = PGPool(url: common.databaseURL, size: 1)
    do {
        switch verb {
        case "set":
            guard rest.count > 1, !rest[1].hasPrefix("--") else { fail("hooks set needs APP_ID KIND") }
            printJSON(try HookCommands.set(appId: appId, kind: HookCommands.kind(rest[1]), arguments: rest,
                                           masterKey: masterKey ?? [], pool: pool))
        case "list":
            printJSON(try HookCommands.list(appId: appId, pool: pool))
        default:
            guard rest.count > 1 else { fail("hooks delete needs APP_ID KIND") }
            guard try AuthHookStore(pool: pool).delete(appId: appId, kind: HookCommands.kind(rest[1])) else {
                fail("no \(rest[1]) hook for app \(appId)")
            }
            print("hooks delete: \(rest[1]) removed")
        }
    } catch {
        fail("hooks \(verb) failed: \(error)")
    }

case ("keys", "rotate"):
    let rest = Array(arguments.dropFirst(2))
    guard let appId = rest.first, !appId.hasPrefix("--") else { fail("keys rotate needs APP_ID\n\(usage)") }
    let algorithmText = option("--alg", in: rest)
    let algorithm = algorithmText.flatMap(SigningAlgorithm.init(rawValue:))
    if algorithmText != nil && algorithm == nil { fail("--alg must be RS256, ES256 or EdDSA") }
    let masterKey = env.key32("IDENTITY_MASTER_KEY", required: true)
    env.validateOrExit(program: "identityctl")
    do {
        printJSON(try KeyCommands.rotate(appId: appId, algorithm: algorithm, masterKey: masterKey ?? [],
                                         pool: PGPool(url: common.databaseURL, size: 1)))
    } catch SigningKeyStore.RotationError.unknownApp {
        fail("no app \(appId)")
    } catch SigningKeyStore.RotationError.pending(let kid, let activatesAt) {
        fail("key \(kid) is still next (it signs from \(KeyCommands.iso(activatesAt))): rotate again after that")
    } catch {
        fail("keys rotate failed: \(error)")
    }

case ("keys", "list"):
    guard let appId = arguments.dropFirst(2).first else { fail("keys list needs APP_ID\n\(usage)") }
    env.validateOrExit(program: "identityctl")
    do {
        printJSON(try KeyCommands.list(appId: appId, pool: PGPool(url: common.databaseURL, size: 1)))
    } catch {
        fail("keys list failed: \(error)")
    }

case ("users", "import"):
    let allowWeakHashes = arguments.contains("--allow-weak-hashes")
    let rest = Array(arguments.dropFirst(2)).filter { $0 != "--allow-weak-hashes" }
    guard rest.count == 2 else { fail("users import needs APP_ID FILE.jsonl\n\(usage)") }
    env.validateOrExit(program: "identityctl")
    do {
        let (report, failed) = try UserImportCommand.run(appId: rest[0], file: rest[1], pool: PGPool(url: common.databaseURL, size: 1),
                                                         allowWeakHashes: allowWeakHashes)
        print(report.serialized)
        exit(failed == 0 ? 0 : 1)
    } catch {
        fail("users import failed: \(error)")
    }

case ("phone", "normalize"):
    // One `COUNTRY<TAB>NUMBER` a line on stdin (COUNTRY may be empty for E.164) → the E.164
    // form, or `-` when the number is not possible: what the gateway does to a number, for
    // operators and for the e2e oracle test against the `phonenumbers` package.
    while let line = readLine() {
        let parts = line.split(separator: "\t", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
        let (country, number) = parts.count == 2 ? (parts[0], parts[1]) : ("", parts[0])
        print(PhoneNumber.normalize(number, country: country.isEmpty ? nil : country) ?? "-")
    }

case ("mail", "replay-dead"):
    let channelName = option("--channel", in: Array(arguments.dropFirst(2)))
    env.validateOrExit(program: "identityctl")
    var channels = DeliveryChannel.all
    if let channelName {
        guard let channel = DeliveryChannel.named(channelName) else {
            fail("--channel wants one of \(DeliveryChannel.all.map(\.name).joined(separator: ", "))")
        }
        channels = [channel]
    }
    // A replayed message starts its retries afresh (a push retry keeps the devices it names).
    let restart = { (message: BusMessage) -> Data in
        if var command = try? ProtoJSON.decode(MailerV1.SendEmail.self, from: message.body), message.type == MailerV1.SendEmail.protoName {
            command.attempt = 0
            return (try? ProtoJSON.encode(command)) ?? message.body
        }
        if var command = try? ProtoJSON.decode(MailerV1.SendPush.self, from: message.body), message.type == MailerV1.SendPush.protoName {
            command.attempt = 0
            return (try? ProtoJSON.encode(command)) ?? message.body
        }
        if var command = try? ProtoJSON.decode(MailerV1.SendSms.self, from: message.body), message.type == MailerV1.SendSms.protoName {
            command.attempt = 0
            return (try? ProtoJSON.encode(command)) ?? message.body
        }
        return message.body
    }
    do {
        var replayed: [String: Int] = [:]
        for channel in channels {
            replayed[channel.name] = try QueueReplay.move(url: brokerURL, heartbeatSeconds: common.amqpHeartbeatSeconds,
                                                          from: channel.deadQueue, to: channel.queue, transform: restart)
            if channel == .email {
                // The previous version's dead letters were all mail. On a broker that never ran
                // it the queue does not exist, and basic.get on it fails: nothing to replay.
                replayed[channel.name, default: 0] += (try? QueueReplay.move(
                    url: brokerURL, heartbeatSeconds: common.amqpHeartbeatSeconds,
                    from: BusTopology.legacyMailerDead, to: channel.queue, transform: restart)) ?? 0
            }
        }
        printJSON(["replayed": replayed.values.reduce(0, +), "by_channel": replayed])
    } catch {
        fail("mail replay-dead failed: \(error)")
    }

case ("bench", let what?):
    let rest = Array(arguments.dropFirst(2))
    let seconds = Double(option("--seconds", in: rest) ?? "5") ?? 5
    let cores = ProcessInfo.processInfo.activeProcessorCount
    do {
        switch what {
        case "argon2":
            var costEnv = EnvironmentReader()
            let cost = PasswordHasher.Cost(
                memoryKiB: UInt32(costEnv.int("IDENTITY_ARGON2_MEMORY_KIB", default: 19_456, range: 8...4_194_304)),
                iterations: UInt32(costEnv.int("IDENTITY_ARGON2_ITERATIONS", default: 2, range: 1...100)),
                parallelism: UInt32(costEnv.int("IDENTITY_ARGON2_PARALLELISM", default: 1, range: 1...64)))
            costEnv.validateOrExit(program: "identityctl")
            printJSON(try Benchmarks.argon2(cost: cost, seconds: seconds,
                                            threads: Int(option("--threads", in: rest) ?? "") ?? cores))
        case "bus":
            printJSON(try Benchmarks.busRoundTrip(url: brokerURL, heartbeatSeconds: common.amqpHeartbeatSeconds, seconds: seconds,
                                                  concurrency: Int(option("--concurrency", in: rest) ?? "") ?? 1))
        case "signing":
            printJSON(try KeyCommands.bench(seconds: seconds))
        case "broker":
            printJSON(try Benchmarks.brokerRate(url: brokerURL, heartbeatSeconds: common.amqpHeartbeatSeconds, seconds: seconds))
        default:
            fail("bench wants argon2, bus, broker or signing\n\(usage)")
        }
    } catch {
        fail("bench \(what) failed: \(error)")
    }

default:
    // Every command the rules know has its case above.
    print(usage)
    exit(2)
}
