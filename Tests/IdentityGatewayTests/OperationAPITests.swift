import Foundation
import XCTest
@testable import IdentityGateway
@testable import IdentityKit
import OperationAPI

/// The typed operation API against the gateway's route table, and its transport's carrying of a
/// call into the pipeline and of the pipeline's answer back.
final class OperationAPITests: XCTestCase {
    func testEveryDeclaredOperationHasOneMethodAndOneRoute() throws {
        let declared = Set(DeclaredOperation.all.map(\.id))
        XCTAssertEqual(Set(OperationName.allCases.map(\.rawValue)), declared)
        let routed = Set(try servedRoutesForTests().compactMap { $0.operation?.id })
        XCTAssertEqual(routed, declared)
    }

    /// A call is the declared route's request, matched by name: its parameters as given (never
    /// parsed out of a path), its query, its body as JSON, the caller's headers less a cookie.
    func testTheTransportRunsTheNamedRouteWithTheCallersRequest() async throws {
        let box = PipelineBox()
        box.routes = Dictionary(try servedRoutesForTests().compactMap { route in route.operation.map { ($0.id, route) } },
                                uniquingKeysWith: { first, _ in first })
        let seen = Locked<(HTTPRequest, Router.Match)?>(nil)
        box.dispatchMatched = { request, match in
            seen.withLock { $0 = (request, match) }
            return .now(.data(.object(["name": .string("laptop")])))
        }
        let caller = OperationCaller(headers: ["authorization": "Bearer at", "x-app-key": "pk_1", "cookie": "s=1",
                                               "content-length": "9"],
                                     clientIP: "203.0.113.9", peerIP: "10.0.0.1", requestId: "req-1")
        let answer = try await Operations(transport: PipelineTransport(pipeline: box))
            .renamePasskey(id: "a/b", RenamePasskeyInput(name: "laptop"), as: caller)
        XCTAssertEqual(answer.data["name"], .string("laptop"))
        let (request, match) = try XCTUnwrap(seen.withLock { $0 })
        guard case .found(let route, let parameters) = match else { return XCTFail("no route") }
        XCTAssertEqual(route.operation?.id, "renamePasskey")
        XCTAssertEqual(parameters, ["id": "a/b"])
        XCTAssertEqual(request.method, "PATCH")
        XCTAssertEqual(request.path, "/v1/me/passkeys/a%2Fb")
        XCTAssertEqual(request.headers["authorization"], "Bearer at")
        XCTAssertEqual(request.headers["content-type"], "application/json")
        XCTAssertNil(request.headers["cookie"])
        XCTAssertNil(request.headers["content-length"])
        XCTAssertEqual(JSONValue.parse(request.body), .object(["name": .string("laptop")]))
        XCTAssertEqual(request.clientIP, "203.0.113.9")
        XCTAssertEqual(request.requestId, "req-1")
    }

    func testARefusalIsThrownWithItsCodeFieldsAndWait() throws {
        let refused = HTTPResponse.problem(.rateLimited(retryAfter: 7), requestId: "r", headers: [("Retry-After", "7")])
        XCTAssertThrowsError(try PipelineTransport.answer(refused)) { error in
            let problem = error as? OperationProblem
            XCTAssertEqual(problem?.status, 429)
            XCTAssertEqual(problem?.code, "auth/rate-limited")
            XCTAssertEqual(problem?.retryAfter, 7)
        }
        let invalid = HTTPResponse.problem(.validationFailed([.init(location: "body.email", message: "is required")]), requestId: "r")
        XCTAssertThrowsError(try PipelineTransport.answer(invalid)) { error in
            let problem = error as? OperationProblem
            XCTAssertEqual(problem?.code, "auth/validation-failed")
            XCTAssertEqual(problem?.errors?.arrayFirstLocation, "body.email")
        }
        XCTAssertEqual(try PipelineTransport.answer(HTTPResponse(status: 204, body: Data())).data, .null)
    }

    /// An input's body carries what was given and leaves out what was not.
    func testAnInputsBodyLeavesOutWhatWasNotGiven() {
        XCTAssertEqual(SignUpInput(email: "a@example.com", password: "pw-12345678", locale: "fr").body,
                       .object(["email": .string("a@example.com"), "password": .string("pw-12345678"), "locale": .string("fr")]))
        XCTAssertEqual(SendPhoneCodeInput(phone: "0612345678", countryCode: "FR").body,
                       .object(["phone": .string("0612345678"), "country_code": .string("FR")]))
        XCTAssertEqual(AdminRotateSecretKeyInput().body, .object([:]))
        // A field the route clears with null (`null_clears`) is sent as null when cleared.
        XCTAssertEqual(AdminUpdateUserInput(firstName: "Ada", clearing: [.lastName, .phone]).body,
                       .object(["first_name": .string("Ada"), "last_name": .null, "phone": .null]))
        XCTAssertEqual(AdminRotateSecretKeyInput(overlapSeconds: 60).body, .object(["overlap_seconds": .number(60)]))
    }
}

private extension JSONValue {
    var arrayFirstLocation: String? {
        guard case .array(let items) = self, let first = items.first else { return nil }
        return first["location"]?.string
    }
}

/// The path-id rule, kept once for every route (and every in-process call) by the pipeline.
final class PathParameterRuleTests: XCTestCase {
    func testAParameterLongerThanAnyIdNamesNothing() {
        XCTAssertTrue(Router.parametersAreIds([:]))
        XCTAssertTrue(Router.parametersAreIds(["uid": String(repeating: "a", count: 64), "session_id": "ses_1"]))
        XCTAssertFalse(Router.parametersAreIds(["uid": "u1", "session_id": String(repeating: "a", count: 65)]))
        XCTAssertFalse(Router.parametersAreIds(["id": String(repeating: "é", count: 33)]), "bytes, not characters")
    }
}
