import Foundation
import XCTest
@testable import IdentityGateway
@testable import IdentityKit

final class RoutesTests: XCTestCase {
    /// The gateway's route table, built without connecting to anything.
    private func routes() throws -> [Route] { try servedRoutesForTests() }

    func testOpenAPIDocumentListsExactlyTheServedRoutes() throws {
        let document = try XCTUnwrap(OpenAPIDocument.source(routes: try routes()))
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
        let document = try XCTUnwrap(JSONValue.parse(OpenAPIDocument.rendered(routes: table), maximumBytes: 1 << 20))
        var limited = 0
        for route in table {
            let operation = document["paths"]?[route.pattern]?[route.method.lowercased()]
            let answer429 = operation?["responses"]?["429"]
            if route.limits.isEmpty {
                XCTAssertNil(operation?["x-rate-limits"], "\(route.method) \(route.pattern) has no limits")
                // A worker may still refuse with 429 (a cooldown, a guess budget): then it is declared.
                XCTAssertEqual(answer429 != nil, route.errors.contains { $0.status == 429 }, route.pattern)
                continue
            }
            limited += 1
            XCTAssertEqual(answer429?["x-error-codes"], .array(["auth/rate-limited"]), route.pattern)
            XCTAssertEqual(answer429?["headers"]?["Retry-After"]?["required"], .bool(true), route.pattern)
            XCTAssertNotNil(answer429?["headers"]?["RateLimit-Policy"], route.pattern)
            guard case .array(let names)? = operation?["x-rate-limits"] else { return XCTFail(route.pattern) }
            XCTAssertEqual(names.count, route.limits.count)
            for (name, limit) in zip(names, route.limits) {
                guard case .string(let text) = name else { return XCTFail(route.pattern) }
                XCTAssertTrue(text.hasPrefix(limit.policy.name + ": "), text)
            }
        }
        // Every sign-in, sign-up, guest, nonce, refresh, code-sending and code-checking call,
        // the password checks of signed-in users (change, deletion, linking), MFA verification,
        // passkey sign-in (options, verify), phone codes (send, verify, link and its verify),
        // the SMS second factor's send, the email change's send and confirm, POST /graphql,
        // Apple's notifications (per app); and the admin API routes and revocation
        // (admin_per_app; introspection is not limited).
        XCTAssertEqual(limited, 31 + table.filter { $0.pattern.hasPrefix("/v1/admin/") }.count)
    }

    /// The document's own part of an operation is keyed by a declared operationId, and never
    /// says what the declaration in proto/ says (where, who may call, what it is called).
    func testOperationPartsBelongToDeclaredOperationsAndAddOnlyShapes() throws {
        let declared = Set(DeclaredOperation.all.map(\.id))
        for (id, part) in OpenAPIDocument.allOperationParts {
            XCTAssertTrue(declared.contains(id), "\(id): no such declared operation")
            guard case .object(let fields) = part else { XCTFail(id); continue }
            XCTAssertEqual(Set(fields.keys).intersection(["summary", "operationId", "security", "tags"]), [], id)
        }
        // Each declared operation is served, exactly once.
        let served = try routes().compactMap { $0.operation?.id }
        XCTAssertEqual(served.sorted(), DeclaredOperation.all.map(\.id).sorted())
    }

    /// The hand-written document has success answers only: an error answer written there could
    /// drift from what the route table says (the rendering adds them all).
    func testDocumentSourceDocumentsSuccessAnswersOnly() throws {
        let source = try XCTUnwrap(OpenAPIDocument.source(routes: try routes()))
        for route in try routes() {
            guard case .object(let answers)? = source["paths"]?[route.pattern]?[route.method.lowercased()]?["responses"] else {
                return XCTFail("\(route.method) \(route.pattern): no responses")
            }
            let statuses = answers.keys.sorted()
            XCTAssertTrue(statuses.contains { $0.hasPrefix("2") }, "\(route.method) \(route.pattern): no success answer")
            // /readyz's 503 is its own JSON (which of store and broker is down), not a problem.
            let errors = statuses.filter { !$0.hasPrefix("2") && !(route.pattern == "/readyz" && $0 == "503") }
            XCTAssertEqual(errors, [], "\(route.method) \(route.pattern): error answers come from the route table")
        }
    }

    /// Each operation of the served document lists, per status, exactly the errors of its route
    /// and of the pipeline for a route of its kind, as problem+json whose schema pins the
    /// status and enumerates the codes; every answer documents `X-Request-Id`.
    func testServedDocumentListsEveryErrorOfTheRouteTable() throws {
        let table = try routes()
        let document = try XCTUnwrap(JSONValue.parse(OpenAPIDocument.rendered(routes: table), maximumBytes: 1 << 20))
        for route in table {
            let name = "\(route.method) \(route.pattern)"
            guard case .object(let answers)? = document["paths"]?[route.pattern]?[route.method.lowercased()]?["responses"] else {
                return XCTFail("\(name): no responses")
            }
            let expected = OpenAPIDocument.documentedErrors(of: route)
            // An OAuth client's endpoint answers a refused client as OAuth does, not as a problem.
            let oauth = route.secretKey?.oauthClient == true
            if oauth { XCTAssertEqual(answers["401"]?["x-oauth-errors"], ["invalid_client"], name) }
            let errorStatuses = answers.keys.filter { !$0.hasPrefix("2") && !(route.pattern == "/readyz" && $0 == "503")
                && !(oauth && $0 == "401") }
            XCTAssertEqual(Set(errorStatuses), Set(expected.map { String($0.status) }), name)
            for (status, errors) in expected {
                let answer = answers[String(status)]
                let codes = JSONValue(errors.map(\.code))
                XCTAssertEqual(answer?["x-error-codes"], codes, "\(name) \(status)")
                guard case .object(let content)? = answer?["content"] else { return XCTFail("\(name) \(status)") }
                XCTAssertEqual(Array(content.keys), ["application/problem+json"], "\(name) \(status)")
                guard case .array(let parts)? = content["application/problem+json"]?["schema"]?["allOf"], parts.count == 2 else {
                    return XCTFail("\(name) \(status): schema")
                }
                XCTAssertEqual(parts[0]["$ref"], .string("#/components/schemas/Problem"))
                XCTAssertEqual(parts[1]["properties"]?["code"]?["enum"], codes, "\(name) \(status)")
                XCTAssertEqual(parts[1]["properties"]?["status"]?["const"], JSONValue(status), "\(name) \(status)")
                for error in errors { XCTAssertEqual(error.status, status, error.code) }
            }
            for (status, answer) in answers {
                let response = answer["$ref"].flatMap { reference -> JSONValue? in
                    guard case .string(let path) = reference else { return nil }
                    return document["components"]?["responses"]?[String(path.split(separator: "/").last ?? "")]
                } ?? answer
                XCTAssertEqual(response["headers"]?["X-Request-Id"]?["$ref"], .string("#/components/headers/X-Request-Id"),
                               "\(name) \(status)")
            }
        }
        XCTAssertEqual(document["components"]?["headers"]?["X-Request-Id"]?["required"], .bool(true))
    }

    /// What the pipeline does for a route follows from how the route is declared, and the
    /// document's security follows from it too: a route that needs the app key says so, and
    /// one that reads a bearer token (to sign in, or to upgrade a guest) documents 401
    /// `auth/invalid-token` and `auth/token-expired`.
    func testDocumentedErrorsFollowTheRouteDeclaration() throws {
        let table = try routes()
        let document = try XCTUnwrap(JSONValue.parse(OpenAPIDocument.rendered(routes: table), maximumBytes: 1 << 20))
        for route in table {
            let name = "\(route.method) \(route.pattern)"
            let codes = Set(OpenAPIDocument.documentedErrors(of: route).flatMap { $0.errors.map(\.code) })
            let bodyCodes: Set = ["auth/unsupported-media-type", "auth/invalid-json", "auth/validation-failed",
                                  "auth/payload-too-large"]
            if route.takesBody { XCTAssertTrue(bodyCodes.isSubset(of: codes), name) }
            XCTAssertEqual(codes.contains("auth/invalid-app-key"), route.needsApp, name)
            if route.needsApp { XCTAssertTrue(codes.contains("auth/unavailable"), name) }
            XCTAssertEqual(codes.contains("auth/rate-limited"), !route.limits.isEmpty || route.errors.contains { $0.status == 429 }, name)
            guard case .array(let security)? = document["paths"]?[route.pattern]?[route.method.lowercased()]?["security"] else {
                return XCTFail("\(name): no security")
            }
            let schemes = Set(security.flatMap { requirement -> [String] in
                guard case .object(let fields) = requirement else { return [] }
                return Array(fields.keys)
            })
            XCTAssertEqual(schemes.contains("appKey"), route.needsApp, name)
            XCTAssertEqual(schemes.contains("bearer"), codes.contains("auth/invalid-token"), name)
            if codes.contains("auth/invalid-token") { XCTAssertTrue(codes.contains("auth/token-expired"), name) }
        }
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
        // A literal segment beats a parameter: "import" is no uid, and its Allow is POST alone.
        guard case .methodNotAllowed(let importAllowed) = router.match(method: "GET", path: "/v1/admin/users/import") else {
            return XCTFail("GET /v1/admin/users/import should be 405")
        }
        XCTAssertEqual(importAllowed, ["POST"])
        guard case .found(let user, let uid) = router.match(method: "GET", path: "/v1/admin/users/u1") else {
            return XCTFail("a uid not matched")
        }
        XCTAssertEqual(user.pattern, "/v1/admin/users/{uid}")
        XCTAssertEqual(uid, ["uid": "u1"])
    }

    /// `/v1/me/passkeys/options` is its own resource, not `{id}` = "options" of `/v1/me/passkeys/{id}`
    /// (found by the fuzzer: `Allow` listed PATCH and DELETE too).
    func testALiteralPathIsNotAlsoASiblingParameter() throws {
        let router = Router(routes: try routes())
        guard case .methodNotAllowed(let allowed) = router.match(method: "PATCH", path: "/v1/me/passkeys/options") else {
            return XCTFail("PATCH /v1/me/passkeys/options should be 405")
        }
        XCTAssertEqual(allowed, ["POST"])
        guard case .found(let route, let parameters) = router.match(method: "PATCH", path: "/v1/me/passkeys/pk_1") else {
            return XCTFail("rename not matched")
        }
        XCTAssertEqual(route.pattern, "/v1/me/passkeys/{id}")
        XCTAssertEqual(parameters, ["id": "pk_1"])
    }

    /// A path equal to a pattern without parameters is matched by that pattern's routes alone.
    func testEveryLiteralPathFindsItsOwnRoutes() throws {
        let table = try routes()
        let router = Router(routes: table)
        let literal = table.filter { !$0.pattern.contains("{") }
        XCTAssertGreaterThan(literal.count, 50)
        for route in literal {
            guard case .found(let found, let parameters) = router.match(method: route.method, path: route.pattern) else {
                XCTFail("\(route.method) \(route.pattern) not matched")
                continue
            }
            XCTAssertEqual(found.method + " " + found.pattern, route.method + " " + route.pattern)
            XCTAssertTrue(parameters.isEmpty)
            guard case .methodNotAllowed(let allowed) = router.match(method: "TRACE", path: route.pattern) else {
                XCTFail("TRACE \(route.pattern) should be 405")
                continue
            }
            XCTAssertEqual(Set(allowed), Set(table.filter { $0.pattern == route.pattern }.map(\.method)), route.pattern)
        }
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
