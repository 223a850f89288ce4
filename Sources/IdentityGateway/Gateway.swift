import Foundation
import IdentityKit
import OperationAPI

/// The HTTP gateway: resolves the app, checks the request's shape, serves reads from the store
/// and sends every change of state to a worker as a command.
public final class Gateway: Service {
    private let configuration: GatewayConfiguration
    private let bus: BusClient
    let router: Router
    private let apps: AppResolver
    private let server: HTTPServer
    private let rateLimits: RateLimitStep
    private let pool: PGPool
    private let secretKeys: SecretKeyStep
    private let consoleAdmins: ConsoleAdminStep
    private let freshProof: FreshProofStep
    private let audit: AuditLog
    private let edge: ClientEdge
    private let console: ConsoleSite
    private let sessionReads: SessionReads
    /// The store's word that an app's settings changed (`AppResolver`).
    private let appChanges: ChangeListener

    public init(configuration: GatewayConfiguration) throws {
        self.configuration = configuration
        let pool = PGPool(url: configuration.common.databaseURL, size: configuration.common.databasePoolSize)
        let bus = try BusClient(url: configuration.common.amqpURL, heartbeatSeconds: configuration.common.amqpHeartbeatSeconds)
        self.bus = bus
        self.pool = pool
        let appStore = AppStore(pool: pool)
        let apps = AppResolver(store: appStore, profiles: ClientProfileStore(pool: pool))
        self.apps = apps
        appChanges = ChangeListener(url: configuration.common.databaseURL, channel: AppResolver.changes,
                                    received: { _ in apps.forgetAll() },
                                    listening: { apps.setListening(true) }, lost: { apps.setListening(false) })
        let sessionReads = SessionReads(users: UserProfileStore(pool: pool), pool: pool,
                                        databaseURL: configuration.common.databaseURL)
        self.sessionReads = sessionReads
        let commands = CommandSender(bus: bus, timeout: configuration.requestTimeout, reads: sessionReads)
        let idleSessions = IdleSessionEnding(bus: bus, timeout: configuration.requestTimeout)
        let verifier = TokenVerifier(store: appStore, sessionTokensReadProfile: true,
                                     idleSessionFound: { idleSessions.end($0, token: $1) })
        let sessions = SessionStore(pool: pool)
        let secretKeys = SecretKeyStep(store: SecretKeyStore(pool: pool))
        self.secretKeys = secretKeys
        consoleAdmins = ConsoleAdminStep(console: ConsoleStore(pool: pool), apps: apps, verifier: verifier,
                                         users: UserProfileStore(pool: pool))
        audit = AuditLog(pool: pool)
        let sessionObject = SessionObjectEdge(sessions: sessions, commands: commands)
        let pipeline = PipelineBox()
        router = Router(routes: Gateway.routes(
            pool: pool, bus: bus, apps: apps, appStore: appStore, commands: commands,
            verifier: verifier, users: UserProfileStore(pool: pool), sessions: sessions, secretKeys: secretKeys,
            sessionReads: sessionReads, pipeline: pipeline))
        freshProof = FreshProofStep(verifier: verifier, sessions: sessions)
        rateLimits = RateLimitStep(store: RateLimitStore(pool: pool),
                                   auth: Authenticator(verifier: verifier, sessions: sessions),
                                   devices: SignInDeviceStore(pool: pool))
        edge = ClientEdge(apps: apps, sessionObject: sessionObject,
                          singleToken: SingleTokenEdge(sessionObject: sessionObject, verifier: verifier,
                                                       users: UserProfileStore(pool: pool)))
        // The web console: its pages outside the API's route table, its sign-in through the
        // whole pipeline below (`ConsoleSite`).
        let consoleEntry = PipelineEntry()
        console = ConsoleSite(apps: apps, console: ConsoleStore(pool: pool), users: UserProfileStore(pool: pool),
                              freshProof: freshProof, commands: commands, audit: audit,
                              signingKeys: SigningKeyStore(pool: pool), secretKeys: secretKeys, sessions: sessions, rateLimits: rateLimits,
                              pipeline: consoleEntry, operations: Operations(transport: PipelineTransport(pipeline: pipeline)))
        let box = DispatchBox()
        server = HTTPServer { request in
            guard let gateway = box.gateway else { return .now(.problem(.unavailable, requestId: request.requestId)) }
            if ConsoleSite.serves(request.path) { return gateway.console.handle(request) }
            return gateway.edge.handle(request, next: gateway.measured)
        }
        box.gateway = self
        consoleEntry.handle = { [weak self] request in
            guard let self else { return .now(.problem(.unavailable, requestId: request.requestId)) }
            return self.edge.handle(request, next: self.measured)
        }
        // The typed operation API's calls (the GraphQL door's) run the declared routes through
        // the core pipeline (access, limits, body checks, commands); the box is weak like the server's.
        pipeline.dispatch = { [weak self] request in
            self?.dispatch(request) ?? .now(.problem(.unavailable, requestId: request.requestId))
        }
        pipeline.dispatchMatched = { [weak self] request, match in
            self?.dispatch(request, match: match) ?? .now(.problem(.unavailable, requestId: request.requestId))
        }
        pipeline.routes = Dictionary(router.routes.compactMap { route in route.operation.map { ($0.id, route) } },
                                     uniquingKeysWith: { first, _ in first })
    }

    /// Every endpoint the gateway serves; `OpenAPIDocument` documents exactly these (a test checks).
    static func routes(pool: PGPool, bus: BusClient, apps: AppResolver, appStore: AppStore, commands: CommandSender,
                       verifier: TokenVerifier, users: UserProfileStore, sessions: SessionStore,
                       secretKeys: SecretKeyStep, sessionReads: SessionReads? = nil,
                       pipeline: PipelineBox = PipelineBox()) -> [Route] {
        // Without a listener (route tables built for tests), every read goes to the store.
        let sessionReads = sessionReads ?? SessionReads(users: users, pool: nil, databaseURL: nil)
        let auth = Authenticator(verifier: verifier, sessions: sessions)
        let providers = ProviderRoutes(auth: auth, commands: commands)
        let served = PasswordRoutes(auth: auth, commands: commands).routes
            + AccountRoutes(auth: auth, devices: DeviceStore(pool: pool), providers: providers, commands: commands).routes
            + SessionRoutes(auth: auth, sessions: sessions, commands: commands).routes
            + MeRoutes(auth: auth, reads: sessionReads, commands: commands).routes
            + PasskeyRoutes(commands: commands).routes
            + providers.routes
            + AppleNotificationRoutes(commands: commands).routes
            + EmailRoutes(auth: auth, commands: commands).routes
            + PhoneRoutes(auth: auth, commands: commands).routes
            + MfaRoutes(commands: commands).routes
            + DiscoveryRoutes(store: appStore).routes
            + IntrospectionRoutes(verifier: verifier, store: IntrospectionStore(pool: pool), reads: sessionReads).routes
            + TokenRevocationRoutes(verifier: verifier, store: IntrospectionStore(pool: pool), commands: commands).routes
            + AdminUserRoutes(users: users, sessions: sessions, commands: commands).routes
            + AdminImportAndKeyRoutes(commands: commands).routes
            + AdminHookRoutes(commands: commands).routes
            + AdminWebhookRoutes(commands: commands).routes
            + AdminAppRoutes(secretKeys: secretKeys, audit: AuditLog(pool: pool), commands: commands).routes
            + GraphQLRoutes(apps: apps, sessionObject: SessionObjectEdge(sessions: sessions, commands: commands),
                            pipeline: pipeline).routes
        return OperationsRoutes(pool: pool, bus: bus, document: OpenAPIDocument.rendered(routes: served),
                                profileDocuments: ProfileDocuments.rendered(routes: served)).routes + served
    }

    public func start() throws {
        sessionReads.start()
        appChanges.start()
        bus.start()
        // A load balancer sends requests as soon as the port accepts: one that came before the
        // broker link would be a 503 (a restarted gateway in a rolling restart). So the port
        // opens once the link is up, or after a bounded wait: a gateway started while the broker
        // is down still serves (its 503s, /healthz) and connects when the broker returns.
        if !bus.waitUntilConnected(timeout: configuration.requestTimeout) {
            Log.warning("broker not connected yet; listening anyway (commands answer 503 until it is)",
                        ["waited_ms": Int(configuration.requestTimeout * 1000)])
        }
        try server.start(host: configuration.httpHost, port: configuration.httpPort, threads: configuration.httpThreads,
                         limits: configuration.connectionLimits, trustedProxies: configuration.trustedProxies)
    }

    /// Drains HTTP (stops listening, answers what it has, 503 for what is still waiting at
    /// the grace's end), then leaves the broker, joining its thread. The bus stays up until the
    /// server is done, since the answers being waited for come through it.
    public func stop() {
        server.stop(grace: configuration.shutdownGrace)
        bus.stop()
        sessionReads.stop()
        appChanges.stop()
    }

    /// The operations listener's /readyz: the same checks as the public /readyz.
    public var readinessChecks: [OperationsListener.Check] {
        let bus = self.bus
        return [Readiness.store(pool), (name: "broker", check: { @Sendable in bus.isConnected })]
    }

    /// The drain, the last answers and the bus's close, with room to spare.
    public var stopTimeLimit: Double { configuration.shutdownGrace + 30 }

    /// The request pipeline every route passes through (after `ClientEdge`: CORS, an app's path
    /// prefix), in order: route match, media type, app (`X-App-Key`, else `Host`), body parsed once, the caller's proof (`FreshProofStep`), the route's rate limits, then its handler. What a route
    /// needs is declared on its `Route`, never re-checked in handlers.
    func dispatch(_ incoming: HTTPRequest) -> RouteResult {
        dispatch(incoming, match: router.match(method: incoming.method, path: incoming.path))
    }

    /// `dispatch` with the route already matched (`measured` matches once for its label and this).
    func dispatch(_ incoming: HTTPRequest, match: Router.Match) -> RouteResult {
        var request = incoming
        let requestId = request.requestId
        switch match {
        case .notFound:
            return .now(.problem(.notFound, requestId: requestId))
        case .methodNotAllowed(let allowed):
            return .now(.problem(.methodNotAllowed, requestId: requestId,
                                 headers: [("Allow", allowed.joined(separator: ", "))]))
        case .found(let route, let parameters):
            guard Router.parametersAreIds(parameters) else { return .now(.problem(.notFound, requestId: requestId)) }
            request.parameters = parameters
            do {
                if route.takesBody, !Self.isJSON(request.header("content-type")) {
                    throw ServiceError.unsupportedMediaType
                }
                var app = route.needsApp
                    ? try request.resolvedApp ?? apps.app(forKey: request.header("x-app-key"), host: request.header("host")) : nil
                if app == nil, let id = request.parameters["app_id"] {
                    // A public route of one app names it in its path (discovery, Apple's
                    // notifications): no such app is 404, and its limits count against that app.
                    guard let named = try apps.app(id: id) else { throw ServiceError.notFound }
                    app = named
                }
                var context = RouteContext(request: request, app: app)
                if let use = route.secretKey {
                    // A console user's call (in-process only), else the app's secret key.
                    let caller = try request.console.map { try consoleAdmins.authenticate($0, operation: route.operation) }
                        ?? secretKeys.authenticate(request, use: use)
                    context.admin = caller
                    context.app = caller.app
                }
                if route.takesBody {
                    context.json = try BodyReader.parse(request.body, maximumBytes: HTTPServer.maximumBody(forPath: request.path))
                }
                // The caller, verified once for the route's declared access and handed to the handler.
                if route.proof != .none {
                    context.caller = try freshProof.check(route.proof, context: context)
                } else if route.access.verifiesCaller {
                    context.caller = try freshProof.caller(
                        context, checkSession: !(route.operation?.sessionCheckedByHandler ?? false))
                    if route.operation?.sessionEnd == true, let caller = context.caller {
                        try freshProof.checkSessionEnd(caller, context: context)
                    }
                }
                var limitHeaders: [(String, String)] = []
                if let app = context.app, !route.limits.isEmpty {
                    limitHeaders = try rateLimits.apply(route.limits, context: context, appId: app.id)
                }
                // Every admin call is in the audit log before it runs: no row, no call.
                if let action = route.secretKey?.auditAction, let caller = context.admin {
                    try audit.append(appId: caller.app.id, AuditLog.Entry(
                        actor: caller.actor, action: action, target: request.parameters["uid"].map { "user:" + $0 } ?? "app",
                        ip: request.clientIP, requestId: requestId,
                        detail: .object(request.parameters.filter { $0.key != "uid" }.mapValues { JSONValue.string($0) }
                            .merging(caller.auditDetail) { $1 })))
                }
                return try route.handler(context).adding(headers: limitHeaders + Self.cacheHeaders(route))
            } catch {
                if let refused = OAuthClientError.answer(for: error, use: route.secretKey) {
                    return RouteResult.now(refused).adding(headers: Self.cacheHeaders(route))
                }
                let answer = ServiceError.answering(error, what: "request",
                                                    fields: ["request_id": requestId, "path": route.pattern])
                return .now(.problem(answer, requestId: requestId))
            }
        }
    }

    /// Answers that carry tokens or a user's data are never stored by a cache (RFC 6749 5.1);
    /// nothing is sniffed into another type.
    static func cacheHeaders(_ route: Route) -> [(String, String)] {
        let personal = route.pattern.hasPrefix("/v1/auth/") || route.pattern.hasPrefix("/v1/me")
            || route.secretKey != nil
        return [("X-Content-Type-Options", "nosniff")] + (personal ? [("Cache-Control", "no-store")] : [])
    }

    /// What `dispatch` (and the HTTP layer under it) may answer for a route of this kind,
    /// whatever its handler does; the served document lists these with the route's own `errors`.
    static func pipelineErrors(of route: Route) -> [ServiceError] {
        var errors: [ServiceError] = []
        if route.takesBody {
            // Media type, then JSON, then (in the handler's `BodyReader`) an object with the
            // right fields; the server refuses a body over 64 KiB before any of it.
            errors += [.unsupportedMediaType, .invalidJSON, .validationFailed([]), .payloadTooLarge]
        }
        if route.needsApp {
            // The app is looked up in the store; every such route reads the store or waits for a worker.
            errors += [.invalidAppKey, .unavailable]
        }
        if let use = route.secretKey {
            // The key is looked up in the store; an admin call's audit row is written there too.
            // An OAuth client's endpoint refuses the client as OAuth does (`OAuthClientError`),
            // documented on its own, not as a problem code.
            errors += use.oauthClient ? [.unavailable] : [.invalidSecretKey, .unavailable]
        }
        if route.proof != .none { errors += FreshProofStep.errors }
        if route.operation?.sessionEnd == true { errors.append(.reauthRequired) }
        // A caller's token: verified by the pipeline (BEARER…), or read by the handler when sent (GUEST, BEARER_OPTIONAL).
        if [.bearer, .guest, .bearerOptional].contains(route.access) { errors += .signedIn }
        if !route.limits.isEmpty { errors.append(.rateLimited(retryAfter: 1)) }
        return errors
    }

    /// `application/json`, with or without parameters, or any `+json` type.
    static func isJSON(_ contentType: String?) -> Bool { isJSON(mediaType: mediaType(contentType)) }

    static func isJSON(mediaType type: String) -> Bool {
        type == "application/json" || (type.hasPrefix("application/") && type.hasSuffix("+json"))
    }

    /// A `Content-Type`'s media type, lower-cased, without its parameters ("" when absent).
    static func mediaType(_ contentType: String?) -> String {
        guard let contentType else { return "" }
        let bytes = contentType.utf8
        guard bytes.allSatisfy({ $0 < 0x80 }) else {
            return contentType.split(separator: ";").first.map { TextScanning.trimmed($0).lowercased() } ?? ""
        }
        // ASCII (every real one), as bytes: the first non-empty part, spaces and tabs trimmed.
        let blank: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 }
        guard let part = bytes.split(separator: UInt8(ascii: ";")).first,
              let first = part.firstIndex(where: { !blank($0) }), let last = part.lastIndex(where: { !blank($0) }) else {
            return ""
        }
        return String(decoding: part[first...last].map { (0x41...0x5A).contains($0) ? $0 + 32 : $0 }, as: UTF8.self)
    }
}

/// Lets the server's dispatch closure reach the gateway built after it (set once in init).
private final class DispatchBox: @unchecked Sendable {
    weak var gateway: Gateway?
}
