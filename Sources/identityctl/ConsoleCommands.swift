import Foundation
import IdentityCredentials
import IdentityKit

/// `identityctl console init|invite|require-mfa`: the web console (docs/console.md). `init`
/// makes the console app once (a `session-object` app whose only allowed origin is the
/// console's, so its cookie sessions accept state changes only from the console's pages, and
/// its passkey relying party the console's host) and records it; `invite` gives an email a role
/// in an app. A role counts for the console user with that verified email. `require-mfa` turns
/// on or off the need for a strong sign-in (on for a new console).
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
        let requireMfa = onOff(option("--require-mfa", in: rest) ?? "on", flag: "--require-mfa")
        do {
            if let existing = try ConsoleStore(pool: pool).consoleAppId() {
                fail("the console app exists already: \(existing) (change its origins with identityctl apps settings \(existing) --allowed-origins ...)")
            }
            let created = try AppStore(pool: pool).create(name: option("--name", in: rest) ?? "Console", accessTokenTTL: 900,
                                                          publicBaseURL: baseURL, masterKey: masterKey ?? [], algorithm: .rs256)
            var update = AppSettingsUpdate()
            update.profile = ClientProfile.Shape.sessionObject.rawValue
            // A console session administers every app its account holds a role in: 12 hours
            // at most, 30 minutes unused (migration 0046 says why; `apps settings` changes them).
            update.sessionLifetime = 12 * 3600
            update.sessionIdleTimeout = 30 * 60
            update.allowedOrigins = [normalized]
            // Passkeys for console accounts: the relying party is the console's host, when it
            // can be one (https, or http on localhost; never an IP address).
            if let host = URLComponents(string: normalized)?.host,
               WebAuthnSettings.problem(origin: normalized, rpId: host) == nil {
                update.webauthnRpId = host
                update.webauthnOrigins = [normalized]
                update.webauthnRpName = option("--name", in: rest) ?? "Identity console"
            }
            if let problem = update.problems(offAllowed: false).first {
                fail("\(AppSettingsUpdate.flag(problem.setting)) \(problem.message)")
            }
            _ = try update.apply(appId: created.app.id, pool: pool, masterKey: masterKey, offAllowed: false,
                                 authority: .operator(operatorLimits))
            try pool.withConnection {
                try $0.query("INSERT INTO console_app (app_id, require_mfa) VALUES ($1, $2)",
                             [created.app.id, PGParam.bool(requireMfa)])
            }
            printJSON(["app_id": created.app.id, "app_key": created.app.appKey, "secret_key": created.secretKey,
                       "origin": normalized, "console_url": normalized + "/console", "require_mfa": requireMfa])
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
            // The invitation link, as an owner's invitation mails it: the invitee opens it to
            // make their console account (the operator hands it over, or mails it).
            let (token, origin) = try pool.transaction { connection -> (String, String?) in
                try connection.query("""
                    INSERT INTO console_roles (app_id, email, role, invited_by) VALUES ($1, $2, $3, 'operator')
                    ON CONFLICT (app_id, email) DO UPDATE SET role = excluded.role
                    """, [appId, email, role.rawValue])
                let origin = try connection.query("""
                    SELECT p.allowed_origins FROM console_app c JOIN app_client_profiles p ON p.app_id = c.app_id
                    """).first?.stringArray("allowed_origins").first
                return (try ConsoleInvitationStore().create(appId: appId, email: email, on: connection), origin)
            }
            var printed: [String: Any] = ["app_id": appId, "email": email, "role": role.rawValue,
                                          "invitation_expires_in": ConsoleInvitationLink.lifetimeSeconds]
            if let origin { printed["invitation_url"] = ConsoleInvitationLink.url(origin: origin, token: token) }
            printJSON(printed)
        } catch {
            fail("console invite failed: \(error)")
        }
    case "require-mfa":
        env.validateOrExit(program: "identityctl")
        let requireMfa = onOff(rest.first ?? "", flag: "console require-mfa")
        do {
            let changed = try pool.withConnection {
                try $0.query("UPDATE console_app SET require_mfa = $1 RETURNING app_id", [PGParam.bool(requireMfa)])
            }
            guard let row = changed.first else { fail("there is no console app yet: run identityctl console init") }
            printJSON(["app_id": try row.string("app_id"), "require_mfa": requireMfa])
        } catch {
            fail("console require-mfa failed: \(error)")
        }
    default:
        fail("console needs init, invite or require-mfa\n\(usage)")
    }
    exit(0)
}

/// `on` or `off` (as the operator types it), else exits naming `flag`.
private func onOff(_ value: String, flag: String) -> Bool {
    switch value {
    case "on": return true
    case "off": return false
    default: fail("\(flag) takes on or off")
    }
}
