import IdentityKit

/// The pipeline step that lets the web console call the admin API's operations in-process: a
/// request the operation API's transport marked with a `ConsoleCredential` (never one from the
/// wire) is authenticated here in place of the app's secret key. The console session must
/// verify against the console app (live, not idle, signed in with two steps when the console
/// requires it), its user must hold a role in the app acted on, and a viewer may only read (a
/// `GET` operation). The caller it gives has the app, the console user as the audit row's
/// actor, and the session token as the authority the command carries, which the worker checks
/// once more (`CallerAuthority`). Everything else (limits, audit row, command, answer) is the
/// operation's own, as for its HTTP route.
struct ConsoleAdminStep: Sendable {
    let console: ConsoleStore
    let apps: AppResolver
    let verifier: TokenVerifier
    /// The console users' profiles (the audit row's `console_email`; a session token's claims
    /// carry no email).
    let users: UserProfileStore

    func authenticate(_ credential: ConsoleCredential, operation: DeclaredOperation?) throws -> AdminCaller {
        guard let operation, operation.audit != nil,
              let consoleId = try console.consoleAppId(), credential.appId != consoleId,
              let consoleApp = try apps.app(id: consoleId) else { throw ServiceError.invalidSecretKey }
        let claims = try verifier.verify(authorization: "Bearer " + credential.sessionToken, app: consoleApp)
        if try console.requiresStrongSignIn(), !ConsoleStore.isStrongSignIn(amr: claims.amr) {
            throw ServiceError.invalidSecretKey
        }
        guard let role = try console.role(consoleAppId: consoleId, uid: claims.sub, appId: credential.appId),
              role.mayChange || operation.method == "GET",
              let app = try apps.app(id: credential.appId) else { throw ServiceError.invalidSecretKey }
        let email = try users.find(appId: consoleId, uid: claims.sub)?.message.email ?? claims.email ?? ""
        return AdminCaller(app: app, consoleUid: claims.sub, email: email, sessionToken: credential.sessionToken)
    }
}
