import IdentityKit

/// One endpoint: its method and path pattern (`{name}` segments are parameters), what it needs
/// before its handler runs, and the handler.
struct Route: Sendable {
    let method: String
    let pattern: String
    /// Needs `X-App-Key` (every /v1/auth/* and /v1/me* call).
    let needsApp: Bool
    /// Takes a JSON body (media type checked and body parsed before the handler runs).
    let takesBody: Bool
    /// Rate limits taken before the handler runs (the pipeline's `RateLimitStep`).
    let limits: [RouteLimit]
    /// The errors of this operation beyond what the pipeline answers for every route like it
    /// (`Gateway.pipelineErrors`): the handler's own and those of the workers it sends
    /// commands to. The served OpenAPI document lists both, per status, as the codes a client
    /// may see; the e2e fuzzer fails on any 4xx whose code is not listed.
    let errors: [ServiceError]
    /// Authenticated with an app secret key instead (admin routes, introspection): the pipeline's
    /// `SecretKeyStep` resolves the app from the key and, for admin calls, writes the audit row.
    let secretKey: SecretKeyUse?
    /// The proof the caller must bring beyond the route's other needs (`FreshProofStep`):
    /// every route that changes a way into an account declares one (`RoutesTests` checks).
    /// A route with a proof gets the verified caller as `RouteContext.caller`.
    let proof: Proof
    let handler: @Sendable (RouteContext) throws -> RouteResult
    /// The pattern split once, not on every request.
    let segments: [Substring]
    /// The declaration of an API route (proto/identity/gateway/v1/gateway.proto); nil for the
    /// service's own routes (health, documents, GraphQL).
    var operation: DeclaredOperation? = nil
    /// Who may call it: the declared access, else what the route's other needs say.
    var access: Access { operation?.access ?? (secretKey != nil ? .secretKey : needsApp ? .appKey : .public) }

    init(method: String, pattern: String, needsApp: Bool, takesBody: Bool, limits: [RouteLimit] = [],
         errors: [ServiceError] = [], secretKey: SecretKeyUse? = nil, proof: Proof = .none,
         handler: @escaping @Sendable (RouteContext) throws -> RouteResult) {
        self.method = method
        self.pattern = pattern
        self.needsApp = needsApp
        self.takesBody = takesBody
        self.limits = limits
        self.errors = errors
        self.secretKey = secretKey
        self.proof = proof
        self.handler = handler
        segments = pattern.split(separator: "/", omittingEmptySubsequences: false)
    }
}

/// What a handler gets: the request with its path parameters, the app when the route needs
/// one, and the parsed body when it takes one (parsed once, by the pipeline).
struct RouteContext: Sendable {
    let request: HTTPRequest
    var app: AppRecord?
    var json: JSONValue? = nil
    /// The secret key's owner on a route declared with `secretKey`.
    var admin: AdminCaller? = nil
    /// The verified caller of a route declared with a `proof` (checked before the handler runs).
    var caller: AccessTokenClaims? = nil

    /// The app of a route declared with `needsApp` (resolved before the handler runs).
    func requireApp() throws -> AppRecord {
        guard let app else { throw ServiceError.invalidAppKey }
        return app
    }

    /// The signed-in caller of a route declared with a `proof`, verified once by the pipeline.
    func requireCaller() throws -> AccessTokenClaims {
        guard let caller else { throw ServiceError.invalidToken }
        return caller
    }

    /// The caller of a route declared with `secretKey` (resolved before the handler runs).
    func requireAdmin() throws -> AdminCaller {
        guard let admin else { throw ServiceError.invalidSecretKey }
        return admin
    }
}

/// Matches a method and path against the route table: a path known under other methods is a
/// 405 with `Allow`, an unknown path a 404.
struct Router: Sendable {
    enum Match {
        case found(Route, parameters: [String: String])
        case methodNotAllowed(allowed: [String])
        case notFound
    }

    let routes: [Route]
    /// The routes' indices by their number of path segments: a path is compared only with the
    /// patterns as long as it (profiled: the scan over every route was a tenth of a request).
    private let bySegmentCount: [Int: [Int]]
    /// Routes without parameters, by their pattern: a path equal to one matches all its
    /// segments, which no pattern with a parameter can beat, so no scan is needed.
    private let byLiteralPath: [String: [Int]]

    init(routes: [Route]) {
        self.routes = routes
        bySegmentCount = Dictionary(grouping: routes.indices, by: { routes[$0].segments.count })
        byLiteralPath = Dictionary(grouping: routes.indices.filter { !routes[$0].segments.contains(where: Self.isParameter) },
                                   by: { routes[$0].pattern })
    }

    /// A literal segment beats a parameter: `/v1/admin/users/import` is the import route's
    /// path only (POST), never `/v1/admin/users/{uid}` with uid "import", so its `Allow` names
    /// only what that resource supports.
    func match(method: String, path: String) -> Match {
        if let literal = byLiteralPath[path] { return Self.chosen(literal, routes: routes, method: method, parts: []) }
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        var best: [Int] = []
        var bestLiterals = -1
        for index in bySegmentCount[parts.count] ?? [] {
            guard let literals = Self.literalsMatched(routes[index].segments, parts) else { continue }
            if literals > bestLiterals {
                best = [index]
                bestLiterals = literals
            } else if literals == bestLiterals {
                best.append(index)
            }
        }
        return Self.chosen(best, routes: routes, method: method, parts: parts)
    }

    /// Of the routes that match the path best, the one of `method` (else 405 with theirs).
    private static func chosen(_ best: [Int], routes: [Route], method: String, parts: [Substring]) -> Match {
        if let hit = best.first(where: { routes[$0].method == method }) {
            return .found(routes[hit], parameters: parameters(routes[hit].segments, parts))
        }
        return best.isEmpty ? .notFound : .methodNotAllowed(allowed: best.map { routes[$0].method })
    }

    /// How many literal segments of `pattern` the path matched, or nil when it does not match
    /// (patterns and parts of the same count).
    private static func literalsMatched(_ pattern: [Substring], _ parts: [Substring]) -> Int? {
        var literals = 0
        for (expected, actual) in zip(pattern, parts) {
            if isParameter(expected) {
                guard !actual.isEmpty else { return nil }
            } else if expected != actual {
                return nil
            } else {
                literals += 1
            }
        }
        return literals
    }

    /// The longest path parameter any route takes: every one is an id (a user's, a session's, a
    /// passkey's, an app's, a webhook's, a provider or hook kind), none longer. A longer one names
    /// nothing: the pipeline answers 404 for it once for every route (`Gateway.dispatch`, the
    /// operation API's calls included), before any handler or store sees it.
    static let maximumParameterBytes = 64

    static func parametersAreIds(_ parameters: [String: String]) -> Bool {
        parameters.values.allSatisfy { $0.utf8.count <= maximumParameterBytes }
    }

    private static func parameters(_ pattern: [Substring], _ parts: [Substring]) -> [String: String] {
        var parameters: [String: String] = [:]
        for (expected, actual) in zip(pattern, parts) where isParameter(expected) {
            parameters[String(expected.dropFirst().dropLast())] = String(actual)
        }
        return parameters
    }

    private static func isParameter(_ segment: Substring) -> Bool {
        segment.utf8.first == UInt8(ascii: "{") && segment.utf8.last == UInt8(ascii: "}")
    }
}
