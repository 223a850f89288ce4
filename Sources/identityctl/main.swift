import Foundation
import IdentityKit

// identityctl: operator commands. Every command prints JSON (or a short line) on stdout and
// exits non-zero with a message on stderr when it fails.

let usage = """
    usage:
      identityctl migrate
      identityctl apps create --name NAME [--access-token-ttl SECONDS]

    environment: IDENTITY_DATABASE_URL, IDENTITY_MIGRATIONS_DIR (migrate),
                 IDENTITY_MASTER_KEY and IDENTITY_PUBLIC_BASE_URL (apps create)
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

default:
    print(usage)
    exit(arguments.isEmpty ? 0 : 2)
}
