import Foundation
import IdentityKit

/// Liveness, readiness, the API document and its reference page (with the page's script and
/// stylesheet). Not `/metrics`: metrics show the traffic's shape, so the gateway serves them
/// only on its operations listener (`IDENTITY_METRICS_PORT`, never the public port;
/// docs/operations.md, "Operations").
struct OperationsRoutes: Sendable {
    let pool: PGPool
    let bus: BusClient
    /// The OpenAPI document as served (`OpenAPIDocument.rendered`), made once.
    let document: Data
    /// One document per client profile (`ProfileDocuments`), by profile name.
    var profileDocuments: [String: Data] = [:]

    var routes: [Route] {
        [Route(method: "GET", pattern: "/healthz", needsApp: false, takesBody: false) { _ in
            .now(.json(.object(["status": "ok"])))
         },
         Route(method: "GET", pattern: "/readyz", needsApp: false, takesBody: false, handler: ready),
         Route(method: "GET", pattern: "/api/docs/openapi.json", needsApp: false, takesBody: false) { _ in
            .now(HTTPResponse(status: 200, headers: [("Content-Type", "application/json")],
                              body: document))
         },
        ] + APIReference.assets.map { path, asset in
            Route(method: "GET", pattern: path, needsApp: false, takesBody: false) { _ in .now(APIReference.response(asset)) }
        } + profileDocuments.keys.sorted().map { profile in
            // One fixed path per profile: an unknown profile is the router's 404.
            let document = profileDocuments[profile] ?? Data()
            return Route(method: "GET", pattern: "/api/docs/profiles/\(profile)/openapi.json", needsApp: false,
                         takesBody: false) { _ in
                .now(HTTPResponse(status: 200, headers: [("Content-Type", "application/json")], body: document))
            }
        }
    }

    /// Ready when the store answers and the broker connection is up.
    func ready(_ context: RouteContext) throws -> RouteResult {
        let store = (try? pool.withConnection { try $0.query("SELECT 1") }) != nil
        let broker = bus.isConnected
        let body: JSONValue = .object(["store": .string(store ? "ok" : "unreachable"),
                                       "broker": .string(broker ? "ok" : "unreachable")])
        return .now(.json(body, status: store && broker ? 200 : 503))
    }
}
