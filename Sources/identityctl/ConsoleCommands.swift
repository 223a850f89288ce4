import Foundation
import IdentityCredentials
import IdentityKit

/// `identityctl console init|invite`: the web console (docs/console.md). `init` makes the
/// console app once (a `session-object` app whose only allowed origin is the console's, so its
/// cookie sessions accept state changes only from the console's pages) and records it; `invite`
/// gives an email a role in an app. A role counts for the console user with that verified email.
func consoleCommand(_ arguments: [String], env: inout EnvironmentReader, common: CommonConfiguration) -> Never {
    let action = arguments.dropFirst().first ?? ""
    let rest = Array(arguments.dropFirst(2))
    let pool = PGPool(url: common.databaseURL, size: 1)
    switch action {
    case "init":
        let masterKey = env.key32("IDENTITY_MASTER_KEY", required: true)
        let baseURL = env.string("IDENTITY_PUBLIC_BASE_URL", default: "http://127.0.0.1:8080")
        let operatorLimits = OperatorLimits.fromEnvironment(&env)
        env.validateOrExit(program: "identityctl")
        let origin = option("--origin", in: rest) ?? baseURL
        guard let normalized = ClientProfile.normalizedOrigin(origin) else {
            fail("--origin must be the console's origin, such as https://id.example.com (scheme, host and port only)")
        }
        do {
            if let existing = try ConsoleStore(pool: pool).consoleAppId() {
                fail("the console app exists already: \(existing) (change its origins with identityctl apps settings \(existing) --allowed-origins ...)")
            }
            let created = try AppStore(pool: pool).create(name: option("--name", in: rest) ?? "Console", accessTokenTTL: 900,
                                                          publicBaseURL: baseURL, masterKey: masterKey ?? [], algorithm: .rs256)
            var update = AppSettingsUpdate()
            update.profile = ClientProfile.Shape.sessionObject.rawValue
            update.allowedOrigins = [normalized]
            if let problem = update.problems(offAllowed: false).first {
                fail("\(AppSettingsUpdate.flag(problem.setting)) \(problem.message)")
            }
            _ = try update.apply(appId: created.app.id, pool: pool, masterKey: masterKey, offAllowed: false,
                                 authority: .operator(operatorLimits))
            try pool.withConnection { try $0.query("INSERT INTO console_app (app_id) VALUES ($1)", [created.app.id]) }
            printJSON(["app_id": created.app.id, "app_key": created.app.appKey, "secret_key": created.secretKey,
                       "origin": normalized, "console_url": normalized + "/console"])
        } catch {
            fail("console init failed: \(error)")
        }
    case "invite":
        env.validateOrExit(program: "identityctl")
        guard let appId = option("--app", in: rest), let email = option("--email", in: rest)?.lowercased(),
              let roleText = option("--role", in: rest) else {
            fail("console invite needs --app APP_ID --email EMAIL --role owner|admin|viewer")
        }
        guard let role = ConsoleStore.Role(rawValue: roleText) else { fail("--role must be owner, admin or viewer") }
        guard EmailAddress.isValid(email) else { fail("--email must be an email address") }
        do {
            guard try AppStore(pool: pool).find(id: appId) != nil else { fail("no app \(appId)") }
            try pool.withConnection { connection in
                try connection.query("""
                    INSERT INTO console_roles (app_id, email, role, invited_by) VALUES ($1, $2, $3, 'operator')
                    ON CONFLICT (app_id, email) DO UPDATE SET role = excluded.role
                    """, [appId, email, role.rawValue])
            }
            printJSON(["app_id": appId, "email": email, "role": role.rawValue])
        } catch {
            fail("console invite failed: \(error)")
        }
    default:
        fail("console needs init or invite\n\(usage)")
    }
    exit(0)
}
