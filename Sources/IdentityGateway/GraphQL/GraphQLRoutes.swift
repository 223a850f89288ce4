import Foundation
import GraphQL
import IdentityKit

/// `POST /graphql` and `GET /graphql` (seed 003, COMPATIBILITY.md "GraphQL"): `{query,
/// variables, operationName}` in, `{data, errors}` out. A GraphQL error is HTTP 200 with
/// `errors[].extensions.code` (the standard catalogue's code for what the core refused);
/// only a request that is not a GraphQL request at all (no JSON object, no `query`) is a 4xx.
/// Limits: the document is at most 64 KiB (the body cap; the query string too), 10 levels
/// deep, 50 aliases, at most one field that signs in per request. Each resolver's core
/// request takes that REST route's own rate limits.
/// `GET /graphql` without `query` is a page to try queries (`GraphQLPage`); `?sdl` the schema.
struct GraphQLRoutes: Sendable {
    let apps: AppResolver
    let sessionObject: SessionObjectEdge
    /// `Gateway.dispatch`, set once the gateway exists (the core pipeline the resolvers use).
    let pipeline: PipelineBox

    static let maximumDocument = 64 * 1024
    static let limits = Limits(maximumDepth: 10, maximumAliases: 50)

    var routes: [Route] {
        [Route(method: "POST", pattern: "/graphql", needsApp: true, takesBody: true,
               limits: [.perIP(RateLimitCatalogue.graphqlPerIP)], errors: [.validationFailed([])], handler: post),
         Route(method: "GET", pattern: "/graphql", needsApp: false, takesBody: false,
               errors: [.validationFailed([])], handler: get)]
    }

    func post(_ context: RouteContext) throws -> RouteResult {
        let app = try context.requireApp()
        guard case .object(let body)? = context.json else { throw Self.badRequest("body", "must be a JSON object") }
        guard case .string(let query)? = body["query"], !query.isEmpty else { throw Self.badRequest("body.query", "must be a non-empty string") }
        var variables: [(String, GraphQLValue)] = []
        switch body["variables"] {
        case nil, .null?: break
        case .object(let given)?: variables = given.map { ($0.key, GraphQLBridge.value($0.value)) }
        default: throw Self.badRequest("body.variables", "must be an object")
        }
        var operationName: String?
        switch body["operationName"] {
        case nil, .null?: break
        case .string(let name)?: operationName = name
        default: throw Self.badRequest("body.operationName", "must be a string")
        }
        return run(Request(query: query, variables: variables, operationName: operationName), app: app, context: context,
                   queriesOnly: false)
    }

    func get(_ context: RouteContext) throws -> RouteResult {
        let request = context.request
        if request.query["sdl"] != nil {
            return .now(HTTPResponse(status: 200, headers: [("Content-Type", "text/plain; charset=utf-8")],
                                     body: Data(SchemaPrinter.print(IdentitySchema.schema).utf8)))
        }
        guard let query = request.query["query"] else {
            return .now(HTTPResponse(status: 200, headers: [("Content-Type", "text/html; charset=utf-8"),
                                                            ("Content-Security-Policy", GraphQLPage.contentSecurityPolicy),
                                                            ("X-Frame-Options", "DENY"), ("Referrer-Policy", "no-referrer")],
                                     body: Data(GraphQLPage.html.utf8)))
        }
        guard !query.isEmpty, query.utf8.count <= Self.maximumDocument else { throw Self.badRequest("query.query", "must be 1 byte to 64 KiB") }
        // The page and the SDL need no app; a query does, and its absence is a GraphQL error
        // like any other refusal of a query (this route never answers 401).
        let app: AppRecord
        do {
            app = try apps.app(forKey: request.header("x-app-key"), host: request.header("host"))
        } catch let error as ServiceError {
            return .now(Self.answer(Response(data: nil, errors: [GraphQLError(error.detail, code: error.code,
                                                                              extensions: [("status", .int(error.status))])])))
        } catch {
            return .now(Self.answer(Response(data: nil, errors: [GraphQLError(ServiceError.unavailable.detail, code: ServiceError.unavailable.code,
                                                                              extensions: [("status", .int(503))])])))
        }
        var variables: [(String, GraphQLValue)] = []
        if let text = request.query["variables"], !text.isEmpty {
            guard case .object(let given)? = JSONValue.parse(Data(text.utf8)) else { throw Self.badRequest("query.variables", "must be a JSON object") }
            variables = given.map { ($0.key, GraphQLBridge.value($0.value)) }
        }
        return run(Request(query: query, variables: variables, operationName: request.query["operationName"]), app: app,
                   context: context, queriesOnly: true)
    }

    private static func badRequest(_ location: String, _ message: String) -> ServiceError {
        .validationFailed([.init(location: location, message: message)])
    }

    private func run(_ graphQL: Request, app: AppRecord, context: RouteContext, queriesOnly: Bool) -> RouteResult {
        let schema = IdentitySchema.schema
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
        let pipeline = self.pipeline
        let call = CoreCall(request: context.request, appId: app.id, singleToken: singleToken,
                            dispatch: { pipeline.dispatch($0) }, sessionObject: sessionObject)
        return .later { respond in
            Task {
                let response = await Execution.execute(prepared, schema: schema, context: call)
                respond(Self.answer(response))
            }
        }
    }

    /// HTTP 200 with the GraphQL response; never stored by a cache (tokens, a user's data).
    static func answer(_ response: Response) -> HTTPResponse {
        HTTPResponse(status: 200, headers: [("Content-Type", "application/graphql-response+json; charset=utf-8"),
                                            ("Cache-Control", "no-store")],
                     body: Data(response.value.json.utf8))
    }
}

/// Lets routes built before the gateway reach its pipeline (set once in `Gateway.init`).
final class PipelineBox: @unchecked Sendable {
    var dispatch: @Sendable (HTTPRequest) -> RouteResult = { .now(.problem(.unavailable, requestId: $0.requestId)) }
}
