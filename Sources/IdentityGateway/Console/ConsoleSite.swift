import Foundation
import IdentityKit
import OperationAPI

/// `/console` (docs/console.md): the web console where each app's team manages its app, served
/// by the gateway as server-rendered pages and forms (a web UI, not API operations: outside the
/// route table and its OpenAPI document). It holds no authority of its own:
/// - Console accounts are users of the console app (`identityctl console init`, profile
///   `session-object`, cookie transport). Signing in is that app's own `POST /v1/auth/login`
///   and `POST /v1/auth/mfa/verify`, sent through the gateway's whole pipeline (rate limits,
///   MFA, the session cookie), never a second implementation.
/// - Every change is the admin API's own command, carrying the console user's session token as
///   its authority: the token worker accepts it only for a user whose verified email holds an
///   owner or admin role in that app (`CallerAuthority`), so the gateway cannot act for an app
///   on its own word. The same checks run first here (`AppSettingsUpdate`), and the audit row
///   names the console user.
/// - A console that requires two-step verification (`identityctl console require-mfa`) shows a
///   session signed in without a second step or a passkey only its Account page (to set one
///   up, through the console app's own `/v1/me` routes) and sign-out (`member` refuses the
///   rest); the workers refuse such a session as a command's authority too (`CallerAuthority`).
/// - Every POST must come from the console's own origin (the console app's `allowed_origins`)
///   and carry the session's CSRF token; pages forbid framing; destructive actions and key
///   handling need a sign-in under `FreshProofStep.maximumAgeSeconds` old; a viewer gets no
///   edit controls and a viewer's POST is refused 403 before any command.
final class ConsoleSite: Sendable {
    struct Asset: Sendable {
        let mediaType: String
        let text: String
    }

    /// A signed-in console user, read from the session cookie on every request.
    struct Session: Sendable {
        let consoleApp: AppRecord
        let profile: ClientProfile
        let uid: String
        /// The session's own claims (the per-account rate limit counts their user).
        let claims: AccessTokenClaims
        let email: String
        let sessionToken: String
        let memberships: [ConsoleStore.Membership]
        /// The console requires a strong sign-in (`identityctl console require-mfa`).
        let requiresStrongSignIn: Bool

        /// Signed in with two steps or a passkey (`ConsoleStore.isStrongSignIn`).
        var signedInStrongly: Bool { ConsoleStore.isStrongSignIn(amr: claims.amr) }
        /// This session may reach only its Account page (to set up a second step) and sign-out.
        var mustSetUpTwoStep: Bool { requiresStrongSignIn && !signedInStrongly }

        /// Per session, unguessable without the session's own (HttpOnly) token, and needing no
        /// server state or key: the SHA-256 of the token under a label of its own.
        var csrfToken: String { ConsoleSite.csrfToken(sessionToken: sessionToken) }

        func membership(_ appId: String) -> ConsoleStore.Membership? { memberships.first { $0.appId == appId } }
    }

    static let contentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        + "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

    let apps: AppResolver
    let console: ConsoleStore
    let users: UserProfileStore
    let freshProof: FreshProofStep
    let commands: CommandSender
    let audit: AuditLog
    let signingKeys: SigningKeyStore
    /// Told to forget the app's remembered keys after a rotation here, as the admin route does.
    let secretKeys: SecretKeyStep
    let sessions: SessionStore
    let rateLimits: RateLimitStep
    /// The gateway's whole pipeline (`ClientEdge` and `dispatch`), for the console app's own
    /// sign-in calls; set once the gateway exists.
    let pipeline: PipelineEntry
    /// The admin API's operations, called as the signed-in console user (`call`).
    let operations: Operations

    init(apps: AppResolver, console: ConsoleStore, users: UserProfileStore, freshProof: FreshProofStep,
         commands: CommandSender, audit: AuditLog, signingKeys: SigningKeyStore, secretKeys: SecretKeyStep,
         sessions: SessionStore, rateLimits: RateLimitStep, pipeline: PipelineEntry, operations: Operations) {
        self.apps = apps
        self.console = console
        self.users = users
        self.freshProof = freshProof
        self.commands = commands
        self.audit = audit
        self.signingKeys = signingKeys
        self.secretKeys = secretKeys
        self.sessions = sessions
        self.rateLimits = rateLimits
        self.pipeline = pipeline
        self.operations = operations
    }

    /// Whether `path` is the console's (served here, before the API's pipeline).
    static func serves(_ path: String) -> Bool { path == "/console" || path.hasPrefix("/console/") }

    func handle(_ request: HTTPRequest) -> RouteResult {
        do {
            return try route(request)
        } catch let error as ServiceError where error.code == ServiceError.reauthRequired.code {
            // The console user signs in again (a new session) and repeats the action.
            return .now(Self.signInAgain(try? session(request)))
        } catch let error as ServiceError where error.status == 429 {
            let wait = error.retryAfter.map { " Try again in \($0) seconds." } ?? " Try again later."
            return .now(Self.html(ConsoleHTML.page(title: "Too many requests", user: nil, body: """
                <section class="card"><h1>Too many requests</h1>\(ConsoleHTML.notice("error", "Too many attempts from here." + wait))
                <p><a href="/console">Back to the console</a></p></section>
                """), status: 429, headers: error.retryAfter.map { [("Retry-After", String($0))] } ?? []))
        } catch let refusal as Refusal where refusal.status == 401 && request.method == "GET" {
            return .now(Self.redirect("/console/sign-in"))
        } catch let refusal as Refusal {
            return .now(Self.html(ConsoleHTML.page(title: refusal.title, user: try? session(request), body: """
                <section class="card"><h1>\(ConsoleHTML.escape(refusal.title))</h1>\(ConsoleHTML.notice("error", refusal.message))
                <p><a href="/console">Back to your apps</a></p></section>
                """), status: refusal.status))
        } catch {
            let answer = ServiceError.answering(error, what: "console", fields: ["request_id": request.requestId, "path": request.path])
            return .now(Self.html(ConsoleHTML.page(title: "Error", user: nil, body: """
                <section class="card"><h1>Something went wrong</h1>\(ConsoleHTML.notice("error", answer.detail))
                <p class="hint">Request \(ConsoleHTML.escape(request.requestId))</p></section>
                """), status: answer.status))
        }
    }

    /// The page asking for a new sign-in (403): a step-up action with a session older than
    /// `FreshProofStep.maximumAgeSeconds`.
    static func signInAgain(_ user: Session?) -> HTTPResponse {
        html(ConsoleHTML.page(title: "Sign in again", user: user, body: """
            <section class="card signin"><h1>Sign in again</h1>
            \(ConsoleHTML.notice("info", "This action needs a sign-in of the last few minutes. Sign in again, then repeat it."))
            <form method="post" action="/console/sign-out">\(user.map(ConsoleHTML.csrfField) ?? "")
            <button id="sign-in-again" type="submit">Sign in again</button></form></section>
            """), status: 403)
    }

    /// A refusal shown as a page of its own (not an API problem).
    struct Refusal: Error {
        let status: Int
        let title: String
        let message: String

        static let notFound = Refusal(status: 404, title: "Not found", message: "There is no such page, or it is not yours to see.")
        static let forbidden = Refusal(status: 403, title: "Not allowed",
                                       message: "Your role in this app only lets you look; an owner or admin can change it.")
        static let badOrigin = Refusal(status: 403, title: "Refused",
                                       message: "This form was not sent from the console's own pages (origin or form token did not match).")
        static let noConsole = Refusal(status: 404, title: "No console",
                                       message: "The console is not set up: the operator runs identityctl console init.")
        static let setUpTwoStepFirst = Refusal(
            status: 403, title: "Set up two-step verification first",
            message: "This console needs two-step verification: on your Account page, set up an authenticator app "
                + "or add a passkey, then sign in with it.")
    }

    private func route(_ request: HTTPRequest) throws -> RouteResult {
        let parts = Array(request.path.split(separator: "/", omittingEmptySubsequences: false).dropFirst(2).map(String.init))
        let method = request.method
        func path(_ pattern: String...) -> [String]? { Self.match(parts, pattern) }
        // Forms that work without a session (and the invitation link, whose each look asks the
        // token worker) count like the sign-in form.
        let signedOut = ["sign-in", "invitation", "reset"].contains(parts.first ?? "")
        if method == "POST" || (method == "GET" && parts.first == "invitation") {
            try limit(signedOut ? .consoleSignIn : .consolePost, request, user: nil)
        }
        if method == "GET", parts.isEmpty || parts == [""] {
            guard let user = try session(request) else { return .now(Self.redirect("/console/sign-in")) }
            if user.mustSetUpTwoStep { return .now(Self.redirect("/console/account")) }
            return .now(Self.html(ConsolePages.apps(user)))
        }
        if method == "GET", path("console.css") != nil { return .now(Self.asset(Self.stylesheet)) }
        if method == "GET", path("console.js") != nil { return .now(Self.asset(Self.script)) }
        if method == "GET", path("sign-in") != nil {
            if try session(request) != nil { return .now(Self.redirect("/console")) }
            return .now(Self.html(ConsolePages.signIn(message: nil)))
        }
        if method == "POST", path("sign-in") != nil {
            return try ConsoleSignIn(site: self).password(request, form: try checkedForm(request, user: nil))
        }
        if method == "POST", path("sign-in", "code") != nil {
            return try ConsoleSignIn(site: self).code(request, form: try checkedForm(request, user: nil))
        }
        if method == "POST", path("sign-in", "passkey", "options") != nil {
            return try ConsoleSignIn(site: self).passkeyOptions(request, form: try checkedForm(request, user: nil))
        }
        if method == "POST", path("sign-in", "passkey") != nil {
            return try ConsoleSignIn(site: self).passkey(request, form: try checkedForm(request, user: nil))
        }
        if let answer = try gettingIn(method, parts, request) { return answer }
        if parts.first == "account" {
            guard let user = try session(request) else {
                if method == "GET" { return .now(Self.redirect("/console/sign-in")) }
                throw Refusal(status: 401, title: "Signed out", message: "Your console session ended. Sign in again.")
            }
            let form = method == "POST" ? try checkedForm(request, user: user) : [:]
            if let answer = ConsoleAccount(site: self).route(method, Array(parts.dropFirst()), request, user: user, form: form) {
                return answer
            }
        }
        if method == "POST", path("sign-out") != nil {
            guard let user = try session(request) else { return .now(Self.redirect("/console/sign-in")) }
            _ = try checkedForm(request, user: user)
            return ConsoleSignIn(site: self).signOut(request, user: user)
        }
        if let found = path("apps", "*", "settings") {
            let (user, membership) = try member(request, appId: found[0], changing: method == "POST")
            if method == "GET" { return ConsoleSettings(site: self).show(request, user: user, membership: membership) }
            if method == "POST" {
                return try ConsoleSettings(site: self).save("providers", request, user: user, membership: membership,
                                                             form: try checkedForm(request, user: user))
            }
        }
        if method == "POST", let found = path("apps", "*", "settings", "*") {
            let (user, membership) = try member(request, appId: found[0], changing: true)
            return try ConsoleSettings(site: self).save(found[1], request, user: user, membership: membership,
                                                         form: try checkedForm(request, user: user))
        }
        if method == "GET", let found = path("apps", "*", "connect") {
            let (user, membership) = try member(request, appId: found[0])
            guard let app = try apps.app(id: membership.appId) else { throw Refusal.notFound }
            return .now(Self.html(ConsoleConnect.page(user: user, membership: membership, app: app)))
        }
        if method == "GET", let found = path("apps", "*", "users") {
            let (user, membership) = try member(request, appId: found[0])
            return .now(Self.html(try ConsoleUsers(site: self).list(request, user: user, membership: membership)))
        }
        if method == "POST", let found = path("apps", "*", "users") {
            let (user, membership) = try member(request, appId: found[0], changing: true)
            return try ConsoleUserCreation(site: self).create(request, user: user, membership: membership,
                                                              form: try checkedForm(request, user: user))
        }
        if method == "GET", let found = path("apps", "*", "keys") {
            let (user, membership) = try member(request, appId: found[0])
            return .now(Self.html(try ConsoleKeys(site: self).show(user: user, membership: membership, notice: nil)))
        }
        if method == "POST", let found = path("apps", "*", "keys", "rotate") {
            let (user, membership) = try member(request, appId: found[0], changing: true)
            return try ConsoleKeys(site: self).rotate(request, user: user, membership: membership,
                                                      form: try checkedForm(request, user: user))
        }
        if method == "POST", let found = path("apps", "*", "keys", "secret", "rotate") {
            let (user, membership) = try member(request, appId: found[0], changing: true)
            return try ConsoleSecretKeys(site: self).rotate(request, user: user, membership: membership,
                                                            form: try checkedForm(request, user: user))
        }
        if let found = path("apps", "*", "webhooks") {
            let (user, membership) = try member(request, appId: found[0], changing: method == "POST")
            if method == "GET" { return ConsoleWebhooks(site: self).show(request, user: user, membership: membership) }
            if method == "POST" {
                return try ConsoleWebhooks(site: self).create(request, user: user, membership: membership,
                                                              form: try checkedForm(request, user: user))
            }
        }
        if method == "POST", let found = path("apps", "*", "webhooks", "*", "*"), ["disable", "enable", "delete"].contains(found[2]) {
            let (user, membership) = try member(request, appId: found[0], changing: true)
            return try ConsoleWebhooks(site: self).act(found[2], webhookId: found[1], request, user: user, membership: membership,
                                                       form: try checkedForm(request, user: user))
        }
        if let found = path("apps", "*", "members") ?? path("apps", "*", "members", "*") {
            return try members(request, appId: found[0], action: found.count == 2 ? found[1] : nil)
        }
        if method == "GET", let found = path("apps", "*", "webhooks", "*") {
            let (user, membership) = try member(request, appId: found[0])
            return try ConsoleWebhookEndpoint(site: self).show(request, user: user, membership: membership, webhookId: found[1])
        }
        if method == "POST", let found = path("apps", "*", "webhooks", "*", "*"), ["replay", "rotate-secret"].contains(found[2]) {
            let (user, membership) = try member(request, appId: found[0], changing: true)
            return try ConsoleWebhookEndpoint(site: self).act(found[2], webhookId: found[1], request, user: user,
                                                              membership: membership, form: try checkedForm(request, user: user))
        }
        if method == "GET", let found = path("apps", "*", "audit") {
            let (user, membership) = try member(request, appId: found[0])
            return .now(Self.html(try ConsoleAudit(site: self).list(request, user: user, membership: membership)))
        }
        if let found = path("apps", "*", "users", "*", "edit") {
            let (user, membership) = try member(request, appId: found[0], changing: true)
            let editing = ConsoleUserEditing(site: self)
            if method == "GET" {
                return .now(Self.html(try editing.page(user: user, membership: membership, uid: found[1], notice: nil, editing: nil)))
            }
            if method == "POST" {
                return try editing.update(request, user: user, membership: membership, uid: found[1],
                                          form: try checkedForm(request, user: user))
            }
        }
        if method == "GET", let found = path("apps", "*", "users", "*") {
            let (user, membership) = try member(request, appId: found[0])
            return try ConsoleUsers(site: self).showing(request, user: user, membership: membership, uid: found[1], notice: nil)
        }
        if method == "POST", parts.count >= 5, parts[0] == "apps", parts[2] == "users",
           let action = ConsoleUserActions.Action(Array(parts[4...])), !parts[1].isEmpty, !parts[3].isEmpty {
            let (user, membership) = try member(request, appId: parts[1], changing: true)
            return try ConsoleUserActions(site: self).run(action, request, user: user, membership: membership, uid: parts[3],
                                                          form: try checkedForm(request, user: user))
        }
        throw Refusal.notFound
    }

    /// An invitation link and a forgotten password (`ConsoleGettingIn`): pages for the signed out.
    private func gettingIn(_ method: String, _ parts: [String], _ request: HTTPRequest) throws -> RouteResult? {
        let pages = ConsoleGettingIn(site: self)
        switch (method, parts) {
        case ("GET", ["invitation"]): return try pages.showInvitation(request)
        case ("POST", ["invitation"]): return try pages.acceptInvitation(request, form: try checkedForm(request, user: nil))
        case ("GET", ["reset"]): return .now(ConsoleGettingIn.resetPage())
        case ("POST", ["reset"]): return try pages.sendResetCode(request, form: try checkedForm(request, user: nil))
        case ("POST", ["reset", "confirm"]): return try pages.reset(request, form: try checkedForm(request, user: nil))
        default: return nil
        }
    }

    /// The Members page (`ConsoleMembers`): every member sees it; a change is sent for any
    /// member, since the token worker alone decides who is an owner.
    private func members(_ request: HTTPRequest, appId: String, action: String?) throws -> RouteResult {
        let (user, membership) = try member(request, appId: appId)
        switch (request.method, action) {
        case ("GET", nil):
            return .now(Self.html(try ConsoleMembers(site: self).show(user: user, membership: membership, notice: nil)))
        case ("POST", nil), ("POST", "role"?), ("POST", "remove"?):
            return try ConsoleMembers(site: self).act(action ?? "invite", request, user: user, membership: membership,
                                                      form: try checkedForm(request, user: user))
        default:
            throw Refusal.notFound
        }
    }

    /// The `*` segments of `pattern` when `parts` matches it (none empty), else nil.
    static func match(_ parts: [String], _ pattern: [String]) -> [String]? {
        guard parts.count == pattern.count else { return nil }
        var found: [String] = []
        for (part, expected) in zip(parts, pattern) {
            if expected == "*" {
                guard !part.isEmpty else { return nil }
                found.append(part)
            } else if part != expected {
                return nil
            }
        }
        return found
    }

    // MARK: - who is asking

    /// The console app and its client profile, or the page saying the console is not set up.
    func consoleApp() throws -> (AppRecord, ClientProfile) {
        guard let id = try console.consoleAppId(), let app = try apps.app(id: id),
              let resolved = try? apps.resolve(key: app.appKey, host: nil) else { throw Refusal.noConsole }
        return (resolved.app, resolved.profile)
    }

    /// The console user of the request's session cookie, nil when there is none (or it ended).
    func session(_ request: HTTPRequest) throws -> Session? {
        guard let token = request.header("cookie").flatMap(SessionObjectEdge.sessionCookie) else { return nil }
        let (app, profile) = try consoleApp()
        let claims: AccessTokenClaims
        do {
            claims = try freshProof.caller(RouteContext(request: Self.bearing(token, request), app: app), checkSession: true)
        } catch let error as ServiceError where error.status == 401 {
            return nil
        }
        guard let user = try users.find(appId: app.id, uid: claims.sub) else { return nil }
        return Session(consoleApp: app, profile: profile, uid: claims.sub, claims: claims, email: user.message.email ?? "",
                       sessionToken: token, memberships: try console.memberships(consoleAppId: app.id, uid: claims.sub),
                       requiresStrongSignIn: try console.requiresStrongSignIn())
    }

    /// The signed-in user and their role in `appId`; an app they hold no role in does not exist
    /// for them, and a change needs an owner or admin.
    private func member(_ request: HTTPRequest, appId: String, changing: Bool = false) throws
        -> (Session, ConsoleStore.Membership) {
        guard let user = try session(request) else { throw Refusal(status: 401, title: "Signed out",
                                                                    message: "Your console session ended. Sign in again.") }
        if user.mustSetUpTwoStep { throw Refusal.setUpTwoStepFirst }
        guard let membership = user.membership(appId) else { throw Refusal.notFound }
        if changing, !membership.role.mayChange { throw Refusal.forbidden }
        return (user, membership)
    }

    /// A POST's form, once its origin is the console's own and (when signed in) its CSRF token
    /// the session's.
    private func checkedForm(_ request: HTTPRequest, user: Session?) throws -> [String: String] {
        let (_, profile) = try consoleApp()
        guard let origin = request.header("origin").flatMap(ClientProfile.normalizedOrigin),
              profile.allowedOrigins.contains(origin) else { throw Refusal.badOrigin }
        guard Gateway.mediaType(request.header("content-type")) == "application/x-www-form-urlencoded" else {
            throw Refusal.badOrigin
        }
        let form = Self.form(request.body)
        if let user {
            try limit(.consoleAccountPost, request, user: user)
            guard let sent = form["csrf"],
                  Digest.constantTimeEqual(Array(sent.utf8), Array(user.csrfToken.utf8)) else { throw Refusal.badOrigin }
        }
        return form
    }

    /// Takes one request from each of `limits` (declared with the API's, `RouteLimit`), counted
    /// against the console app; a spent one is the "Too many requests" page (429).
    func limit(_ limits: [RouteLimit], _ request: HTTPRequest, user: Session?) throws {
        let (app, _) = try consoleApp()
        var context = RouteContext(request: request, app: app)
        context.caller = user?.claims
        _ = try rateLimits.apply(limits, context: context, appId: app.id)
    }

    /// The session is at most `FreshProofStep.maximumAgeSeconds` old (`auth/reauth-required`
    /// otherwise: the page asking to sign in again).
    func requireFreshSignIn(_ request: HTTPRequest, user: Session) throws {
        _ = try freshProof.check(.freshSignIn, context: RouteContext(request: Self.bearing(user.sessionToken, request),
                                                                     app: user.consoleApp))
    }

    /// Writes the audit row of a console action before it runs, as the admin API does (no row,
    /// no action), with the console user as actor.
    func audit(_ action: String, appId: String, user: Session, target: String, request: HTTPRequest,
               detail: [String: JSONValue] = [:]) throws {
        try audit.append(appId: appId, AuditLog.Entry(
            actor: "console:" + user.uid, action: action, target: target, ip: request.clientIP,
            requestId: request.requestId, detail: .object(detail.merging(["console_email": .string(user.email)]) { $1 })))
    }

    /// An admin operation of the operation API, called as `user` on `appId`: its access, limits,
    /// audit row and command are the operation's own (`ConsoleAdminStep`). The answer is its
    /// `data` (with its status) or its problem, as an HTTP answer the page renders.
    func call(_ user: Session, appId: String, request: HTTPRequest,
              _ run: @escaping @Sendable (Operations, OperationCaller) async throws -> OperationAnswer) -> RouteResult {
        let caller = OperationCaller(headers: request.headers, clientIP: request.clientIP, peerIP: request.peerIP,
                                     requestId: request.requestId).onConsole(sessionToken: user.sessionToken, appId: appId)
        let operations = self.operations
        let requestId = request.requestId
        return .later { respond in
            Task {
                do {
                    let answer = try await run(operations, caller)
                    // A page answers 200 for any success (the operation's 201 or 204 included).
                    respond(HTTPResponse.data(answer.data, status: 200))
                } catch let problem as OperationProblem {
                    var body: [String: JSONValue] = ["status": JSONValue(problem.status), "code": .string(problem.code),
                                                     "detail": .string(problem.detail), "request_id": .string(requestId)]
                    if let errors = problem.errors { body["errors"] = errors }
                    respond(HTTPResponse.json(.object(body), status: problem.status))
                } catch {
                    respond(HTTPResponse.problem(.internal, requestId: requestId))
                }
            }
        }
    }

    /// An admin command carrying the console user's session token as its authority; the answer
    /// is the reply's JSON (200) or the problem the worker or bus gave.
    func send<Command: ProtoMessage, Reply: ProtoMessage>(
        _ command: Command, expecting: Reply.Type, queue: String = BusTopology.tokenCommands, appId: String, user: Session,
        request: HTTPRequest, render: @escaping @Sendable (Reply) -> JSONValue
    ) -> RouteResult {
        commands.send(command, expecting: expecting, queue: queue, appId: appId,
                      request: Self.bearing(user.sessionToken, request)) {
            HTTPResponse.data(render($0))
        }
    }

    // MARK: - helpers

    static func bearing(_ token: String, _ request: HTTPRequest) -> HTTPRequest {
        var headers = request.headers
        headers["authorization"] = "Bearer " + token
        headers["cookie"] = nil
        return HTTPRequest(method: request.method, path: request.path, headers: headers, body: Data(),
                           clientIP: request.clientIP, peerIP: request.peerIP, requestId: request.requestId)
    }

    static func csrfToken(sessionToken: String) -> String {
        Base64URL.encode(Digest.sha256("identity-console-csrf\u{0}" + sessionToken))
    }

    /// An `application/x-www-form-urlencoded` body (a repeated name keeps its first value).
    static func form(_ body: Data) -> [String: String] {
        var fields: [String: String] = [:]
        for pair in String(decoding: body, as: UTF8.self).split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = TextScanning.percentDecoded(parts[0], plusIsSpace: true), fields[name] == nil else { continue }
            fields[name] = parts.count == 2 ? TextScanning.percentDecoded(parts[1], plusIsSpace: true) ?? "" : ""
        }
        return fields
    }

    /// `Referrer-Policy: same-origin`, not `no-referrer`: under the latter a browser sends a
    /// form's `Origin` as `null`, and the origin check refuses every form.
    static let pageHeaders: [(String, String)] = [
        ("Content-Security-Policy", contentSecurityPolicy), ("X-Frame-Options", "DENY"),
        ("X-Content-Type-Options", "nosniff"), ("Referrer-Policy", "same-origin"), ("Cache-Control", "no-store"),
    ]

    static func html(_ page: String, status: Int = 200, headers: [(String, String)] = []) -> HTTPResponse {
        HTTPResponse(status: status, headers: [("Content-Type", "text/html; charset=utf-8")] + pageHeaders + headers,
                     body: Data(page.utf8))
    }

    /// 303 See Other: after a form, the browser GETs the next page.
    static func redirect(_ location: String, headers: [(String, String)] = []) -> HTTPResponse {
        HTTPResponse(status: 303, headers: [("Location", location)] + pageHeaders + headers, body: Data())
    }

    static func asset(_ asset: Asset) -> HTTPResponse {
        HTTPResponse(status: 200, headers: [("Content-Type", asset.mediaType), ("Content-Security-Policy", contentSecurityPolicy),
                                            ("X-Content-Type-Options", "nosniff"), ("Cache-Control", "no-cache")],
                     body: Data(asset.text.utf8))
    }

    /// An API answer handed to console.js as it is (a passkey ceremony's options, or the problem).
    static func json(_ response: HTTPResponse) -> HTTPResponse {
        HTTPResponse(status: response.status, headers: [("Content-Type", "application/json"), ("X-Content-Type-Options", "nosniff"),
                                                        ("Cache-Control", "no-store")],
                     body: response.body)
    }

    /// The problem an answer carries: its message and, per field, its `errors[]`.
    static func problem(_ response: HTTPResponse) -> (message: String, fields: [String: [String]]) {
        guard case .value(let body) = JSONValue.parseBody(response.body) else {
            return ("The service did not answer (HTTP \(response.status)). Try again.", [:])
        }
        var fields: [String: [String]] = [:]
        if case .array(let errors)? = body["errors"] {
            for error in errors {
                guard case .string(let location)? = error["location"], case .string(let message)? = error["message"] else { continue }
                let name = location.split(separator: ".").dropFirst().first.map(String.init) ?? location
                fields[name, default: []].append(message)
            }
        }
        var message = ""
        if case .string(let detail)? = body["detail"] { message = detail }
        if case .string(let code)? = body["code"] { message += " (\(code))" }
        return (message, fields)
    }
}
