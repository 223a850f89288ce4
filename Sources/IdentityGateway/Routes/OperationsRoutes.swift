import Foundation
import IdentityKit

/// Liveness, readiness, the API document and its page.
struct OperationsRoutes: Sendable {
    let pool: PGPool
    let bus: BusClient
    /// The OpenAPI document as served (`OpenAPIDocument.rendered`), made once.
    let document: Data
    /// `IDENTITY_METRICS_TOKEN`: who may read `/metrics` on the public port. Unset: nobody
    /// here (404); the operations listener on `IDENTITY_METRICS_PORT` serves them instead.
    var metricsToken: String? = nil

    var routes: [Route] {
        [Route(method: "GET", pattern: "/healthz", needsApp: false, takesBody: false) { _ in
            .now(.json(.object(["status": "ok"])))
         },
         Route(method: "GET", pattern: "/readyz", needsApp: false, takesBody: false, handler: ready),
         Route(method: "GET", pattern: "/metrics", needsApp: false, takesBody: false,
               errors: [.notFound], handler: metrics),
         Route(method: "GET", pattern: "/api/docs", needsApp: false, takesBody: false) { _ in
            .now(HTTPResponse(status: 200, headers: [("Content-Type", "text/html; charset=utf-8"),
                                                     ("Content-Security-Policy", DocsPage.contentSecurityPolicy),
                                                     ("Referrer-Policy", "no-referrer")],
                              body: Data(DocsPage.html.utf8)))
         },
         Route(method: "GET", pattern: "/api/docs/openapi.json", needsApp: false, takesBody: false) { _ in
            .now(HTTPResponse(status: 200, headers: [("Content-Type", "application/json")],
                              body: document))
         }]
    }

    /// Metrics show the traffic's shape (routes, rates, failures): only for the bearer of the
    /// metrics token, compared in constant time (as digests, so its length leaks nothing either).
    /// Anyone else gets the 404 of an unknown path: the public port does not say it serves them.
    func metrics(_ context: RouteContext) throws -> RouteResult {
        guard let metricsToken else { throw ServiceError.notFound }
        let header = context.request.header("authorization") ?? ""
        let given = header.hasPrefix("Bearer ") ? String(header.dropFirst(7)) : ""
        guard Digest.constantTimeEqual(Digest.sha256(given), Digest.sha256(metricsToken)) else {
            throw ServiceError.notFound
        }
        return .now(HTTPResponse(status: 200, headers: [("Content-Type", Metrics.contentType), ("Cache-Control", "no-store")],
                                 body: Data(Metrics.shared.render().utf8)))
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
