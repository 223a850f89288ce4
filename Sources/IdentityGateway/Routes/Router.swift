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
    let handler: @Sendable (RouteContext) throws -> RouteResult
    /// The pattern split once, not on every request.
    let segments: [Substring]

    init(method: String, pattern: String, needsApp: Bool, takesBody: Bool, limits: [RouteLimit] = [],
         errors: [ServiceError] = [], handler: @escaping @Sendable (RouteContext) throws -> RouteResult) {
        self.method = method
        self.pattern = pattern
        self.needsApp = needsApp
        self.takesBody = takesBody
        self.limits = limits
        self.errors = errors
        self.handler = handler
        segments = pattern.split(separator: "/", omittingEmptySubsequences: false)
    }
}

/// What a handler gets: the request with its path parameters, the app when the route needs
/// one, and the parsed body when it takes one (parsed once, by the pipeline).
struct RouteContext: Sendable {
    let request: HTTPRequest
    let app: AppRecord?
    var json: JSONValue? = nil

    /// The app of a route declared with `needsApp` (resolved before the handler runs).
    func requireApp() throws -> AppRecord {
        guard let app else { throw ServiceError.invalidAppKey }
        return app
    }
}

/// Matches a method and path against the route table: a path known under other methods is a
/// 405 with `Allow`, an unknown path a 404.
struct Router: Sendable {
    enum Match {
        case found(Route, parameters: [String: String])
        case methodNotAllowed(allowed: [String])
        case notFound

        var isNotFound: Bool { if case .notFound = self { return true } else { return false } }
    }

    let routes: [Route]
    /// `routes` split once: patterns without parameters, and those with.
    private let literal: [Route]
    private let parameterized: [Route]

    init(routes: [Route]) {
        self.routes = routes
        literal = routes.filter { !$0.pattern.contains("{") }
        parameterized = routes.filter { $0.pattern.contains("{") }
    }

    /// A path that a pattern without parameters names exactly (`/v1/me/passkeys/options`) is that
    /// resource only, never also `{id}` of a sibling pattern (`/v1/me/passkeys/{id}`): the
    /// literal patterns are tried alone first, so the methods and `Allow` are theirs.
    func match(method: String, path: String) -> Match {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        if case let match = Self.match(method: method, parts: parts, in: literal), !match.isNotFound { return match }
        return Self.match(method: method, parts: parts, in: parameterized)
    }

    private static func match(method: String, parts: [Substring], in routes: [Route]) -> Match {
        var allowed: [String] = []
        for route in routes {
            guard let parameters = parameters(route.segments, parts) else { continue }
            if route.method == method { return .found(route, parameters: parameters) }
            allowed.append(route.method)
        }
        return allowed.isEmpty ? .notFound : .methodNotAllowed(allowed: allowed)
    }

    private static func parameters(_ pattern: [Substring], _ parts: [Substring]) -> [String: String]? {
        guard pattern.count == parts.count else { return nil }
        var parameters: [String: String] = [:]
        for (expected, actual) in zip(pattern, parts) {
            if expected.hasPrefix("{") && expected.hasSuffix("}") {
                guard !actual.isEmpty else { return nil }
                parameters[String(expected.dropFirst().dropLast())] = String(actual)
            } else if expected != actual {
                return nil
            }
        }
        return parameters
    }
}
