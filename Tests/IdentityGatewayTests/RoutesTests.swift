import Foundation
import XCTest
@testable import IdentityGateway
@testable import IdentityKit

final class RoutesTests: XCTestCase {
    /// The gateway's route table, built without connecting to anything.
    private func routes() throws -> [Route] {
        let pool = PGPool(url: "postgresql://nobody@127.0.0.1:1/none", size: 1)
        let bus = try BusClient(url: "amqp://guest:guest@127.0.0.1:1/%2F", heartbeatSeconds: 30)
        let store = AppStore(pool: pool)
        return Gateway.routes(pool: pool, bus: bus, apps: AppResolver(store: store), appStore: store,
                              commands: CommandSender(bus: bus, timeout: 1), verifier: TokenVerifier(store: store),
                              users: UserProfileStore(pool: pool), sessions: SessionStore(pool: pool))
    }

    func testOpenAPIDocumentListsExactlyTheServedRoutes() throws {
        let document = try XCTUnwrap(JSONValue.parse(Data(OpenAPIDocument.json.utf8)))
        guard case .object(let paths)? = document["paths"] else { return XCTFail("no paths") }
        var documented = Set<String>()
        for (path, item) in paths {
            guard case .object(let operations) = item else { continue }
            for method in operations.keys where ["get", "post", "patch", "put", "delete"].contains(method) {
                documented.insert(method.uppercased() + " " + path)
            }
        }
        let served = Set(try routes().map { $0.method + " " + $0.pattern })
        XCTAssertEqual(served.subtracting(documented), [], "served but not documented")
        XCTAssertEqual(documented.subtracting(served), [], "documented but not served")
        XCTAssertEqual(document["openapi"], .string("3.1.0"))
    }

    func testServedDocumentShowsEveryRateLimitOfTheRouteTable() throws {
        let table = try routes()
        let document = try XCTUnwrap(JSONValue.parse(OpenAPIDocument.rendered(limitsOf: table)))
        XCTAssertNotNil(document["components"]?["responses"]?["RateLimited"]?["headers"]?["RateLimit-Policy"])
        var limited = 0
        for route in table {
            let operation = document["paths"]?[route.pattern]?[route.method.lowercased()]
            let answer429 = operation?["responses"]?["429"]
            if route.limits.isEmpty {
                XCTAssertNil(answer429, "\(route.method) \(route.pattern) has no limits")
                continue
            }
            limited += 1
            XCTAssertEqual(answer429?["$ref"], .string("#/components/responses/RateLimited"), route.pattern)
            guard case .array(let names)? = operation?["x-rate-limits"] else { return XCTFail(route.pattern) }
            XCTAssertEqual(names.count, route.limits.count)
            for (name, limit) in zip(names, route.limits) {
                guard case .string(let text) = name else { return XCTFail(route.pattern) }
                XCTAssertTrue(text.hasPrefix(limit.policy.name + ": "), text)
            }
        }
        // Every sign-in, sign-up, guest, nonce, refresh, code-sending and code-checking call,
        // and the password checks of signed-in users (change, deletion, linking).
        XCTAssertEqual(limited, 18)
    }

    func testRouterMatchesParametersAndTellsNotFoundFromMethodNotAllowed() throws {
        let router = Router(routes: try routes())
        guard case .found(let route, let parameters) = router.match(method: "GET", path: "/v1/apps/app_1/jwks.json") else {
            return XCTFail("jwks not matched")
        }
        XCTAssertEqual(route.pattern, "/v1/apps/{app_id}/jwks.json")
        XCTAssertEqual(parameters, ["app_id": "app_1"])
        guard case .methodNotAllowed(let allowed) = router.match(method: "PUT", path: "/v1/me") else {
            return XCTFail("PUT /v1/me should be 405")
        }
        XCTAssertEqual(Set(allowed), ["GET", "PATCH", "DELETE"])
        guard case .notFound = router.match(method: "GET", path: "/v1/nope") else { return XCTFail("should be 404") }
        guard case .notFound = router.match(method: "GET", path: "/v1/apps//jwks.json") else { return XCTFail("empty id") }
    }

    func testRequestIdsAreEchoedOnlyWhenSane() {
        XCTAssertEqual(HTTPServer.requestId(from: "test-req_1.2:3"), "test-req_1.2:3")
        XCTAssertTrue(HTTPServer.requestId(from: "has space").hasPrefix("req_"))
        XCTAssertTrue(HTTPServer.requestId(from: String(repeating: "a", count: 129)).hasPrefix("req_"))
        XCTAssertTrue(HTTPServer.requestId(from: nil).hasPrefix("req_"))
    }

    func testJSONMediaTypes() {
        XCTAssertTrue(Gateway.isJSON("application/json"))
        XCTAssertTrue(Gateway.isJSON("Application/JSON; charset=utf-8"))
        XCTAssertTrue(Gateway.isJSON("application/merge-patch+json"))
        XCTAssertFalse(Gateway.isJSON("text/plain"))
        XCTAssertFalse(Gateway.isJSON(nil))
    }

    func testProblemBodiesCarryCodeStatusAndLocations() throws {
        let response = HTTPResponse.problem(.validationFailed([.init(location: "body.email", message: "is required")]),
                                            requestId: "r1")
        XCTAssertEqual(response.status, 422)
        XCTAssertTrue(response.headers.contains { $0 == ("Content-Type", "application/problem+json") })
        let body = try XCTUnwrap(JSONValue.parse(response.body))
        XCTAssertEqual(body["code"], .string("auth/validation-failed"))
        XCTAssertEqual(body["status"], .number(422))
        XCTAssertEqual(body["request_id"], .string("r1"))
        XCTAssertEqual(body["errors"], .array([.object(["location": .string("body.email"), "message": .string("is required")])]))
    }
}
