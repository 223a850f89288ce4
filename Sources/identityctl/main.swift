import Foundation
import IdentityKit

// identityctl: operator commands. Every command prints JSON (or a short line) on stdout and
// exits non-zero with a message on stderr when it fails.

let usage = """
    usage:
      identityctl migrate
      identityctl apps create --name NAME [--access-token-ttl SECONDS]
      identityctl apps settings APP_ID [--access-token-ttl SECONDS] [--google-client-ids ID,ID] [--apple-bundle-ids ID,ID]
          [--apple-services-ids ID,ID] [--apple-team-id ID] [--apple-key-id ID]
          [--apple-private-key-file KEY.p8] [--firebase-project-id ID] [--firebase-trust-email-verified true|false]
          [--deep-link-url URL] [--mail-from-name NAME] [--mail-from-address ADDRESS]
          [--mail-template KIND.PART=VALUE]...   (KIND: email_code, password_reset,
          email_verification; PART: subject, text, html)
          [--session-lifetime SECONDS]   (absolute, 3600 to 315360000; default 31536000 = 365 days)
          [--rate-limit NAME=COUNT/WINDOW|NAME=default|NAME=off]...   (WINDOW: 30s, 15m, 1h, 1d;
          off only with IDENTITY_RATE_LIMIT_OFF_ALLOWED=1, for tests; NAME: see README)
          [--profile standard|single-token|session-object] [--domains HOST,HOST] [--path-prefix /api/v2]
          [--allowed-origins https://a.example,…] [--apple-nonce issued|client]   (client profiles;
          an empty value clears a list or the prefix; see README)
      identityctl mail replay-dead    moves dead-lettered mail back to the mailer queue
      identityctl keys mail-payload-key
                                      the key mailer workers get (IDENTITY_MAIL_PAYLOAD_KEY), derived
                                      from IDENTITY_MASTER_KEY: mailers never hold the master key
      identityctl keys reseal         once after upgrading, as the database owner: reseals rows sealed
                                      with the master key itself under their sub-keys (idempotent)
      identityctl bench argon2|bus|broker [--seconds S] [--threads N] [--concurrency N]
                                      the machine's limits for make bench (JSON)

    environment: IDENTITY_DATABASE_URL, IDENTITY_MIGRATIONS_DIR (migrate),
                 IDENTITY_MASTER_KEY (apps create, and apps settings with a .p8 key),
                 IDENTITY_PUBLIC_BASE_URL (apps create), IDENTITY_AMQP_URL and
                 IDENTITY_AMQP_HEARTBEAT_SECONDS (mail replay-dead, bench)
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
var env = EnvironmentReader()
let common = CommonConfiguration(reading: &env, defaultPoolSize: 1)

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
    let masterKey = env.key32("IDENTITY_MASTER_KEY", required: true)
    let baseURL = env.string("IDENTITY_PUBLIC_BASE_URL", default: "http://127.0.0.1:8080")
    env.validateOrExit(program: "identityctl")
    do {
        let created = try AppStore(pool: PGPool(url: common.databaseURL, size: 1))
            .create(name: name, accessTokenTTL: ttl, publicBaseURL: baseURL, masterKey: masterKey ?? [])
        printJSON(["app_id": created.app.id, "name": created.app.name, "app_key": created.app.appKey,
                   "secret_key": created.secretKey, "issuer": created.app.issuer,
                   "access_token_ttl": created.app.accessTokenTTL])
    } catch {
        fail("apps create failed: \(error)")
    }

case ("apps", "settings"):
    let rest = Array(arguments.dropFirst(2))
    guard let appId = rest.first, !appId.hasPrefix("--") else { fail("apps settings needs APP_ID\n\(usage)") }
    let keyFile = option("--apple-private-key-file", in: rest)
    let masterKey = env.key32("IDENTITY_MASTER_KEY", required: keyFile != nil)
    env.validateOrExit(program: "identityctl")
    let pool = PGPool(url: common.databaseURL, size: 1)
    do {
        let apps = AppStore(pool: pool)
        guard var app = try apps.find(id: appId) else { fail("no app \(appId)") }
        if let ttlText = option("--access-token-ttl", in: rest) {
            guard let ttl = Int(ttlText), (300...86_400).contains(ttl) else {
                fail("--access-token-ttl must be 300 to 86400 seconds (5 minutes to 24 hours)")
            }
            // Token workers cache an app's settings for a minute: new tokens get it within that.
            app = try apps.setAccessTokenTTL(appId: appId, seconds: ttl) ?? app
        }
        if let text = option("--session-lifetime", in: rest) {
            guard let seconds = Int(text), (3600...315_360_000).contains(seconds) else {
                fail("--session-lifetime must be 3600 to 315360000 seconds (1 hour to 10 years)")
            }
            try apps.setSessionLifetime(appId: appId, seconds: seconds)
        }
        let sessionLifetime = try apps.sessionLifetime(appId: appId) ?? 0
        let store = ProviderSettingsStore(pool: pool)
        var settings = try store.settings(appId: appId)
        let list = { (name: String) in option(name, in: rest).map { $0.split(separator: ",").map(String.init) } }
        if let ids = list("--google-client-ids") { settings.googleClientIds = ids }
        if let ids = list("--apple-bundle-ids") { settings.appleBundleIds = ids }
        if let ids = list("--apple-services-ids") { settings.appleServicesIds = ids }
        if let team = option("--apple-team-id", in: rest) { settings.appleTeamId = team }
        if let key = option("--apple-key-id", in: rest) { settings.appleKeyId = key }
        if let project = option("--firebase-project-id", in: rest) { settings.firebaseProjectId = project }
        if let trust = option("--firebase-trust-email-verified", in: rest) {
            guard trust == "true" || trust == "false" else { fail("--firebase-trust-email-verified wants true or false") }
            settings.firebaseTrustEmailVerified = trust == "true"
        }
        if let mode = option("--apple-nonce", in: rest) {
            guard mode == "issued" || mode == "client" else { fail("--apple-nonce wants issued or client") }
            settings.appleNonceFromClient = mode == "client"
        }
        if let keyFile {
            let pem = try String(contentsOfFile: keyFile, encoding: .utf8)
            _ = try ECSigningKey.fromPEM(pem)  // refuse a file that is not an EC private key
            settings.applePrivateKeySealed = try SecretSealer(masterKey: masterKey ?? [], purpose: .appleSecretSeal).seal(Array(pem.utf8),
                                                             associatedData: ProviderSecretAAD.applePrivateKey(appId: appId))
        }
        try store.save(appId: appId, settings)
        let mailStore = MailSettingsStore(pool: pool)
        var mail = try mailStore.settings(appId: appId)
        if let url = option("--deep-link-url", in: rest) { mail.deepLinkURL = url.isEmpty ? nil : url }
        if let name = option("--mail-from-name", in: rest) { mail.fromName = name.isEmpty ? nil : name }
        if let address = option("--mail-from-address", in: rest) { mail.fromAddress = address.isEmpty ? nil : address }
        for template in options("--mail-template", in: rest) {
            guard let equals = template.firstIndex(of: "="), case let target = template[..<equals].split(separator: "."),
                  target.count == 2, ["email_code", "password_reset", "email_verification"].contains(String(target[0])),
                  ["subject", "text", "html"].contains(String(target[1]))
            else { fail("--mail-template wants KIND.PART=VALUE, got \(template)") }
            mail.templates[String(target[0]), default: [:]][String(target[1])] = String(template[template.index(after: equals)...])
        }
        try mailStore.save(appId: appId, mail)
        let profile = try ClientProfileSettings.apply(rest, appId: appId, store: ClientProfileStore(pool: pool))
        let limits = try RateLimitSettings.apply(options("--rate-limit", in: rest), appId: appId, apps: apps,
                                                 offAllowed: env.string("IDENTITY_RATE_LIMIT_OFF_ALLOWED", default: "") == "1")
        printJSON(ClientProfileSettings.json(profile).merging([
                   "apple_nonce": settings.appleNonceFromClient ? "client" : "issued",
                   "app_id": appId, "access_token_ttl": app.accessTokenTTL, "deep_link_url": mail.deepLinkURL ?? NSNull(),
                   "mail_from_name": mail.fromName ?? NSNull(), "mail_from_address": mail.fromAddress ?? NSNull(), "google_client_ids": settings.googleClientIds,
                   "apple_bundle_ids": settings.appleBundleIds, "apple_services_ids": settings.appleServicesIds,
                   "apple_team_id": settings.appleTeamId ?? NSNull(), "apple_key_id": settings.appleKeyId ?? NSNull(),
                   "apple_private_key_set": settings.applePrivateKeySealed != nil,
                   "firebase_project_id": settings.firebaseProjectId ?? NSNull(),
                   "firebase_trust_email_verified": settings.firebaseTrustEmailVerified, "rate_limits": limits,
                   "session_lifetime": sessionLifetime]) { $1 })
    } catch {
        fail("apps settings failed: \(error)")
    }

case ("keys", "mail-payload-key"):
    // What mailer workers get instead of the master key (IDENTITY_MAIL_PAYLOAD_KEY).
    let masterKey = env.key32("IDENTITY_MASTER_KEY", required: true)
    env.validateOrExit(program: "identityctl")
    print(Hex.encode(MailPayloadSeal(masterKey: masterKey ?? []).keyBytes))

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

case ("mail", "replay-dead"):
    env.validateOrExit(program: "identityctl")
    do {
        // A replayed message starts its retries afresh.
        let moved = try QueueReplay.move(url: common.amqpURL, heartbeatSeconds: common.amqpHeartbeatSeconds,
                                         from: BusTopology.mailerDead, to: BusTopology.mailerCommands) {
            guard var command = try? ProtoJSON.decode(MailerV1.SendEmail.self, from: $0.body) else { return $0.body }
            command.attempt = 0
            return (try? ProtoJSON.encode(command)) ?? $0.body
        }
        printJSON(["replayed": moved])
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
            printJSON(try Benchmarks.busRoundTrip(url: common.amqpURL, heartbeatSeconds: common.amqpHeartbeatSeconds, seconds: seconds,
                                                  concurrency: Int(option("--concurrency", in: rest) ?? "") ?? 1))
        case "broker":
            printJSON(try Benchmarks.brokerRate(url: common.amqpURL, heartbeatSeconds: common.amqpHeartbeatSeconds, seconds: seconds))
        default:
            fail("bench wants argon2, bus or broker\n\(usage)")
        }
    } catch {
        fail("bench \(what) failed: \(error)")
    }

default:
    print(usage)
    exit(arguments.isEmpty ? 0 : 2)
}
