import XCTest
@testable import IdentityGateway
@testable import IdentityKit

/// Every route that adds, replaces or removes a way into an account declares a proof beyond
/// the access token (`Route.proof`), so a stolen token alone cannot add a lasting way in. The
/// way-in resources are named here, independently of the routes' own declarations: a new route
/// under one of them that forgets its proof fails this test.
final class FreshProofRoutesTests: XCTestCase {
    /// The resources whose non-GET calls change a way in: passkeys, the phone, second factors
    /// and backup codes, provider links, the password, the email (where a reset code goes).
    static let wayInResources = ["/v1/me/passkeys", "/v1/me/phone", "/v1/me/mfa", "/v1/me/identities",
                                 "/v1/me/password", "/v1/me/email/change"]

    /// Routes under those resources whose proof is elsewhere. Each entry says why.
    static let exempt: Set<String> = [
        // Spends the code that the start of the change sent to the new address; the start
        // itself (POST /v1/me/email/change) needed the fresh sign-in.
        "POST /v1/me/email/change/confirm",
    ]

    private func routes() throws -> [Route] { try servedRoutesForTests() }

    private static func changesWayIn(_ route: Route) -> Bool {
        route.method != "GET" && wayInResources.contains { route.pattern == $0 || route.pattern.hasPrefix($0 + "/") }
    }

    func testEveryRouteThatChangesAWayInDeclaresAProof() throws {
        let table = try routes()
        let wayIn = table.filter(Self.changesWayIn)
        // The resources exist: a renamed path must not make this test vacuous.
        XCTAssertGreaterThanOrEqual(wayIn.count, 17, wayIn.map(\.pattern).description)
        for route in wayIn where !Self.exempt.contains(route.method + " " + route.pattern) {
            XCTAssertNotEqual(route.proof, .none, "\(route.method) \(route.pattern) changes a way in without a proof")
        }
    }

    /// Adding a way in needs the fresh sign-in itself (or the password, for a provider link):
    /// a proof the body carries is only for the routes whose flow checks it (password change).
    func testWayInRoutesNeedAFreshSignInExceptThePasswordChange() throws {
        for route in try routes().filter(Self.changesWayIn) where !Self.exempt.contains(route.method + " " + route.pattern) {
            if route.pattern == "/v1/me/password" {
                XCTAssertEqual(route.proof, .ownProof)
            } else if route.method == "POST", route.pattern == "/v1/me/identities/{provider}" {
                XCTAssertEqual(route.proof, .freshSignInOrPassword)
            } else {
                XCTAssertEqual(route.proof, .freshSignIn, "\(route.method) \(route.pattern)")
            }
        }
    }

    /// The served document lists 403 auth/reauth-required and the token errors on each such
    /// route, from the declaration (`Gateway.pipelineErrors`), not from a hand-kept list.
    func testDocumentListsTheProofErrorsOfEachProofRoute() throws {
        let table = try routes()
        let document = try XCTUnwrap(JSONValue.parse(OpenAPIDocument.rendered(routes: table), maximumBytes: 1 << 20))
        for route in table where route.proof != .none {
            let operation = document["paths"]?[route.pattern]?[route.method.lowercased()]
            guard case .array(let codes)? = operation?["responses"]?["403"]?["x-error-codes"] else {
                XCTFail("\(route.method) \(route.pattern): no 403"); continue
            }
            XCTAssertTrue(codes.contains(.string("auth/reauth-required")), route.pattern)
            XCTAssertNotNil(operation?["responses"]?["401"], route.pattern)
        }
    }
}
