import Foundation
import GraphQL
import IdentityGraphQL
import IdentityKit
import OperationAPI

/// `POST /graphql` and `GET /graphql` (seed 003; docs/client-profiles.md, "GraphQL"):
/// `{query, variables, operationName}` in, `{data, errors}` out. A GraphQL error is HTTP 200 with
/// `errors[].extensions.code` (the standard catalogue's code for what the core refused);
/// only a request that is not a GraphQL request at all (no JSON object, no `query`) is a 4xx.
/// Limits: the document is at most 64 KiB (the body cap; the query string too), 10 levels
/// deep, 50 aliases, at most one field that signs in per request. Each resolver's core
/// request takes that REST route's own rate limits.
/// `GET /graphql` without `query` is a page to try queries (`GraphQLPage`); `?sdl` the schema.
/// A `GET` with `query` is sent on as the `POST` it stands for (`forwardedGet`), so both take
/// `graphql_per_ip` in the same place, before any parsing.
struct GraphQLRoutes: Sendable {
    let apps: AppResolver
    let sessionObject: SessionObjectEdge
    /// `Gateway.dispatch`, set once the gateway exists: the pipeline the typed operation API's
    /// calls run through (`PipelineTransport`), and a `GET` query's `POST`.
    let pipeline: PipelineBox

    static let maximumDocument = 64 * 1024
    static let limits = Limits(maximumDepth: 10, maximumAliases: 50)

    var routes: [Route] {
        [Route(method: "POST", pattern: "/graphql", needsApp: true, takesBody: true,
               limits: [.perIP(RateLimitCatalogue.graphqlPerIP)], errors: [.validationFailed([])], handler: post),
         // No `limits` here: the pipeline takes a route's limits from its app, and the page and
         // the SDL need none (they are answered from bytes made once). A query is limited as the
         // POST it is sent on as, which may refuse it (429) or find the store down (503).
         Route(method: "GET", pattern: "/graphql", needsApp: false, takesBody: false,
               errors: [.validationFailed([]), .rateLimited(retryAfter: 1), .unavailable], handler: get)]
    }

    /// Set on the `POST` a `GET` is sent on as: that request runs queries only. A client that
    /// sends it itself only takes the right to run mutations from its own request.
    static let forwardedGet = "x-graphql-forwarded-get"
    /// What the pipeline adds to every answer of `GET /graphql` (`Gateway.cacheHeaders`).
    private static let addedByPipeline = Set(Gateway.cacheHeaders(Route(
        method: "GET", pattern: "/graphql", needsApp: false, takesBody: false,
        handler: { _ in .now(HTTPResponse(status: 204, body: Data())) })).map { $0.0.lowercased() })
    static let sdl = Data(SchemaPrinter.print(IdentitySchema.schema).utf8)
    static let page = Data(GraphQLPage.html.utf8)

    func post(_ context: RouteContext) throws -> RouteResult {
        let app = try context.requireApp()
        guard case .object(let body)? = context.json else { throw Self.badRequest("body", "must be a JSON object") }
        guard case .string(let query)? = body["query"], !query.isEmpty else { throw Self.badRequest("body.query", "must be a non-empty string") }
        var variables: [(String, GraphQLValue)] = []
        switch body["variables"] {
        case nil, .null?: break
        // Sorted: the same variables are the same request to the introspection cache.
        case .object(let given)?: variables = given.map { ($0.key, GraphQLBridge.value($0.value)) }.sorted { $0.0 < $1.0 }
        default: throw Self.badRequest("body.variables", "must be an object")
        }
        var operationName: String?
        switch body["operationName"] {
        case nil, .null?: break
        case .string(let name)?: operationName = name
        default: throw Self.badRequest("body.operationName", "must be a string")
        }
        return run(Request(query: query, variables: variables, operationName: operationName), app: app, context: context,
                   queriesOnly: context.request.header(Self.forwardedGet) != nil)
    }

    func get(_ context: RouteContext) throws -> RouteResult {
        let request = context.request
        if request.query["sdl"] != nil {
            return .now(HTTPResponse(status: 200, headers: [("Content-Type", "text/plain; charset=utf-8")], body: Self.sdl))
        }
        guard let query = request.query["query"] else {
            return .now(HTTPResponse(status: 200, headers: [("Content-Type", "text/html; charset=utf-8"),
                                                            ("Content-Security-Policy", GraphQLPage.contentSecurityPolicy),
                                                            ("X-Frame-Options", "DENY"), ("Referrer-Policy", "no-referrer")],
                                     body: Self.page))
        }
        guard !query.isEmpty, query.utf8.count <= Self.maximumDocument else { throw Self.badRequest("query.query", "must be 1 byte to 64 KiB") }
        // The page and the SDL need no app; a query does, and its absence is a GraphQL error
        // like any other refusal of a query (this route never answers 401).
        do {
            _ = try apps.app(forKey: request.header("x-app-key"), host: request.header("host"))
        } catch let error as ServiceError {
            return .now(Self.answer(Response(data: nil, errors: [GraphQLError(error.detail, code: error.code,
                                                                              extensions: [("status", .int(error.status))])])))
        } catch {
            return .now(Self.answer(Response(data: nil, errors: [GraphQLError(ServiceError.unavailable.detail, code: ServiceError.unavailable.code,
                                                                              extensions: [("status", .int(503))])])))
        }
        var body: [String: JSONValue] = ["query": .string(query)]
        if let text = request.query["variables"], !text.isEmpty {
            guard case .object(let given)? = JSONValue.parse(Data(text.utf8)) else { throw Self.badRequest("query.variables", "must be a JSON object") }
            body["variables"] = .object(given)
        }
        if let name = request.query["operationName"] { body["operationName"] = .string(name) }
        return forward(JSONValue.object(body), of: request)
    }

    /// The `POST` a `GET` query stands for, through the whole pipeline: `graphql_per_ip` is
    /// taken there (the pipeline limits routes of an app, and this one's app is found only now),
    /// then the `POST` handler runs it, queries only. The pipeline's own headers, already on
    /// the answer, are left off so that this route's pipeline adds them once.
    private func forward(_ body: JSONValue, of request: HTTPRequest) -> RouteResult {
        var headers = request.headers.filter { !["content-length", "transfer-encoding"].contains($0.key) }
        headers["content-type"] = "application/json"
        headers[Self.forwardedGet] = "1"
        let post = HTTPRequest(method: "POST", path: "/graphql", headers: headers, body: Data(body.serialized.utf8),
                               clientIP: request.clientIP, peerIP: request.peerIP, requestId: request.requestId)
        switch pipeline.dispatch(post) {
        case .now(let response): return .now(Self.trimmed(response))
        case .later(let work): return .later { respond in work { respond(Self.trimmed($0)) } }
        }
    }

    private static func trimmed(_ response: HTTPResponse) -> HTTPResponse {
        var response = response
        response.headers.removeAll { addedByPipeline.contains($0.0.lowercased()) }
        return response
    }

    private static func badRequest(_ location: String, _ message: String) -> ServiceError {
        .validationFailed([.init(location: location, message: message)])
    }

    private func run(_ graphQL: Request, app: AppRecord, context: RouteContext, queriesOnly: Bool) -> RouteResult {
        let schema = IdentitySchema.schema
        // An introspection query's answer is the schema's, whoever asks (a query: a GET may
        // have it too); only what passed every check below was kept.
        if let kept = Self.introspection.answer(for: graphQL) {
            Self.introspectionAnswers.inc("cached")
            return .now(Self.answer(json: kept))
        }
        let prepared: PreparedOperation
        switch Execution.prepare(graphQL, schema: schema, limits: Self.limits) {
        case .failure(let response): return .now(Self.answer(response))
        case .success(let operation): prepared = operation
        }
        if queriesOnly, prepared.operation.type != .query {
            // A GET can be sent by a link or an image: it never changes anything.
            return .now(Self.answer(Response(data: nil, errors: [GraphQLError("Mutations must be sent with POST.",
                                                                               code: "auth/method-not-allowed")])))
        }
        let signIns = prepared.rootFieldNames(schema: schema).filter { IdentitySchema.signInFields.contains($0) }
        if signIns.count > 1 {
            return .now(Self.answer(Response(data: nil, errors: [GraphQLError(
                "At most one sign-in per request (\(signIns.count) asked for).", code: GraphQLError.Code.validationFailed)])))
        }
        let singleToken = (try? apps.resolve(key: context.request.header("x-app-key"), host: context.request.header("host")))?
            .profile.shape == .singleToken
        let request = context.request
        let caller = OperationCaller(headers: request.headers, clientIP: request.clientIP, peerIP: request.peerIP,
                                     requestId: request.requestId)
        let sessionObject = self.sessionObject
        let call = GraphQLCall(operations: Operations(transport: PipelineTransport(pipeline: pipeline)), caller: caller,
                               singleToken: singleToken) { access, uid, sessionId throws(OperationProblem) in
            // The single-token profile's long-lived session token, as its REST edge issues it.
            try PipelineTransport.answer(await sessionObject.issueToken(
                access: access, appId: app.id, uid: uid, sessionId: sessionId, request: request).response()).data["session_token"]?.string ?? ""
        }
        return .later { respond in
            Task {
                let json = await Execution.execute(prepared, schema: schema, context: call).value.json
                if Self.introspection.keep(json, for: graphQL, prepared: prepared, schema: schema) {
                    Self.introspectionAnswers.inc("executed")
                }
                respond(Self.answer(json: json))
            }
        }
    }

    /// Introspection answers of `IdentitySchema.schema` under `limits`, the same for every app.
    static let introspection = IntrospectionCache(capacity: 64)
    static let introspectionAnswers = Metrics.shared.counter(
        "identity_graphql_introspection_answers_total",
        "GraphQL introspection queries answered, by source: executed, or cached (the same request's answer kept).",
        labels: ["source"])

    /// HTTP 200 with the GraphQL response; never stored by a cache (tokens, a user's data).
    static func answer(_ response: Response) -> HTTPResponse { answer(json: response.value.json) }

    static func answer(json: String) -> HTTPResponse {
        HTTPResponse(status: 200, headers: [("Content-Type", "application/graphql-response+json; charset=utf-8"),
                                            ("Cache-Control", "no-store")],
                     body: Data(json.utf8))
    }
}
