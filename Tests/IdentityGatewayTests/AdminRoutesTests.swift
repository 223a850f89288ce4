import Foundation
import XCTest
@testable import IdentityGateway
@testable import IdentityKit

/// The admin API's declarations and rules that need no running service.
final class AdminRoutesTests: XCTestCase {
    private func routes() throws -> [Route] {
        let pool = PGPool(url: "postgresql://nobody@127.0.0.1:1/none", size: 1)
        let bus = try BusClient(url: "amqp://guest:guest@127.0.0.1:1/%2F", heartbeatSeconds: 30)
        let store = AppStore(pool: pool)
        return Gateway.routes(pool: pool, bus: bus, apps: AppResolver(store: store, profiles: ClientProfileStore(pool: pool)), appStore: store,
                              commands: CommandSender(bus: bus, timeout: 1), verifier: TokenVerifier(store: store),
                              users: UserProfileStore(pool: pool), sessions: SessionStore(pool: pool),
                              secretKeys: SecretKeyStep(store: SecretKeyStore(pool: pool)))
    }

    /// Every /v1/admin route needs the secret key, is audited under its own action, is rate
    /// limited per app, and never takes a user's app key route instead.
    func testEveryAdminRouteNeedsTheSecretKeyAndIsAudited() throws {
        let admin = try routes().filter { $0.pattern.hasPrefix("/v1/admin/") }
        XCTAssertGreaterThanOrEqual(admin.count, 12)
        var actions = Set<String>()
        for route in admin {
            let action = try XCTUnwrap(route.secretKey?.auditAction, "\(route.method) \(route.pattern) is not audited")
            XCTAssertTrue(actions.insert(action).inserted, "two routes share the audit action \(action)")
            XCTAssertFalse(route.needsApp, route.pattern)
            XCTAssertFalse(route.secretKey?.oauthClient ?? true, route.pattern)
            XCTAssertEqual(route.limits.map(\.policy.name), ["admin_per_app"], route.pattern)
            XCTAssertTrue(Gateway.pipelineErrors(of: route).contains(.invalidSecretKey), route.pattern)
        }
        let introspect = try XCTUnwrap(try routes().first { $0.pattern == "/v1/token/introspect" })
        XCTAssertNil(introspect.secretKey?.auditAction)
        XCTAssertTrue(introspect.secretKey?.oauthClient ?? false)
    }

    func testOnlySecretKeysAreAcceptedAsCredentials() {
        let key = "sk_" + String(repeating: "a", count: 43)
        XCTAssertEqual(SecretKeyStep.credentials("Bearer \(key)", basicAllowed: false)?.key, key)
        XCTAssertNil(SecretKeyStep.credentials("Bearer eyJhbGciOiJSUzI1NiJ9.e30.sig", basicAllowed: false))
        XCTAssertNil(SecretKeyStep.credentials("Bearer ak_public", basicAllowed: false))
        XCTAssertNil(SecretKeyStep.credentials("Bearer sk_" + String(repeating: "a", count: 200), basicAllowed: false))
        XCTAssertNil(SecretKeyStep.credentials(nil, basicAllowed: true))
        let basic = "Basic " + Data("app_1:\(key)".utf8).base64EncodedString()
        XCTAssertNil(SecretKeyStep.credentials(basic, basicAllowed: false))
        let parsed = SecretKeyStep.credentials(basic, basicAllowed: true)
        XCTAssertEqual(parsed?.key, key)
        XCTAssertEqual(parsed?.clientId, "app_1")
        XCTAssertNil(SecretKeyStep.credentials("Basic !!!", basicAllowed: true))
    }

    /// An OAuth client's endpoint also takes the key from a form (client_secret_post), but never
    /// a header and a form secret together, and an admin route never from a form.
    func testAnOAuthClientMayPostItsSecretInTheFormButUseOneWayOnly() {
        let key = "sk_" + String(repeating: "a", count: 43)
        func request(_ body: String, type: String = "application/x-www-form-urlencoded",
                     authorization: String? = nil) -> HTTPRequest {
            var headers = ["content-type": type]
            headers["authorization"] = authorization
            return HTTPRequest(method: "POST", path: "/v1/token/revoke", headers: headers, body: Data(body.utf8),
                               clientIP: "192.0.2.1", peerIP: "192.0.2.1", requestId: "req_1")
        }
        let posted = SecretKeyStep.credentials(request("token=t&client_id=app_1&client_secret=\(key)"), oauthClient: true)
        XCTAssertEqual(posted?.key, key)
        XCTAssertEqual(posted?.clientId, "app_1")
        XCTAssertNil(SecretKeyStep.credentials(request("token=t&client_secret=\(key)"), oauthClient: false))
        XCTAssertNil(SecretKeyStep.credentials(request("token=t&client_secret=\(key)", type: "text/plain"), oauthClient: true))
        XCTAssertNil(SecretKeyStep.credentials(request("token=t&client_secret=ak_public"), oauthClient: true))
        XCTAssertNil(SecretKeyStep.credentials(request("token=t&client_secret=\(key)", authorization: "Bearer \(key)"),
                                               oauthClient: true))
        XCTAssertEqual(SecretKeyStep.credentials(request("token=t", authorization: "Bearer \(key)"), oauthClient: true)?.key, key)
        XCTAssertNil(SecretKeyStep.credentials(request("token=t"), oauthClient: true))
    }

    func testCustomClaimsRules() {
        XCTAssertNil(CustomClaims.problem(.object(["plan": .string("pro"), "seats": .number(3)])))
        for name in ["sub", "aud", "iss", "exp", "roles", "sid", "amr", "email", "is_guest", "jti"] {
            XCTAssertNotNil(CustomClaims.problem(.object([name: .string("x")])), name)
        }
        XCTAssertNotNil(CustomClaims.problem(.array([])))
        XCTAssertNotNil(CustomClaims.problem(.object(["": .null])))
        XCTAssertNotNil(CustomClaims.problem(.object(["big": .string(String(repeating: "x", count: 1020))])))
        XCTAssertNil(CustomClaims.problem(.object(["fits": .string(String(repeating: "x", count: 1000))])))
    }

    func testCustomClaimsAreWrittenBesideTheStandardOnesButNeverOverThem() throws {
        var claims = AccessTokenClaims(iss: "https://i", aud: "app_1", sub: "u1", sid: "ses_1", iat: 1, exp: 2, jti: "j",
                                       amr: ["pwd"], isGuest: false, email: nil, emailVerified: false, roles: ["a"])
        claims.custom = ["plan": .string("pro"), "sub": .string("someone-else"), "n": .number(5),
                         "nested": .object(["x": .array([.bool(true), .null])])]
        let data = try JSONEncoder().encode(claims)
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: data) as? [String: Any])
        XCTAssertEqual(object["sub"] as? String, "u1")
        XCTAssertEqual(object["plan"] as? String, "pro")
        XCTAssertEqual(object["n"] as? Int, 5)
        XCTAssertNotNil(object["nested"] as? [String: Any])
        XCTAssertEqual(object["roles"] as? [String], ["a"])
    }
}
