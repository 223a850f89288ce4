import Foundation
import XCTest
@testable import GraphQL
@testable import IdentityGateway
import IdentityGraphQL
@testable import IdentityKit
import OperationAPI

/// `startEmailChange` and `confirmEmailChange` of `IdentitySchema`, run through the typed
/// operation API against a stubbed core pipeline: each runs its declared route with the
/// caller's request (method, path, body, the caller's bearer) and maps the core's answer, or its
/// refusal, onto the schema's types.
final class GraphQLEmailChangeTests: XCTestCase {
    /// The core requests a run sent, and the answer each got.
    final class Core: @unchecked Sendable {
        private let lock = NSLock()
        private var seen: [HTTPRequest] = []
        let answer: @Sendable (HTTPRequest) -> HTTPResponse

        init(_ answer: @escaping @Sendable (HTTPRequest) -> HTTPResponse) { self.answer = answer }

        func dispatch(_ request: HTTPRequest) -> RouteResult {
            lock.lock(); seen.append(request); lock.unlock()
            return .now(answer(request))
        }

        var requests: [HTTPRequest] {
            lock.lock(); defer { lock.unlock() }
            return seen
        }
    }

    static let user: JSONValue = .object([
        "uid": .string("01j9x6k3m4q5r6s7t8v9w0x1y2"), "email": .string("new@example.test"), "email_verified": .bool(true),
        "username": .null, "first_name": .string("Jane"), "last_name": .null, "photo_url": .null, "is_guest": .bool(false),
        "has_password": .bool(true), "mfa_enabled": .bool(false), "created_at": .string("2026-09-27T10:15:00.123456Z"),
        "user_metadata": .object([:]),
    ])

    func run(_ query: String, variables: [(String, GraphQLValue)] = [], core: Core) async throws -> Response {
        let box = PipelineBox()
        box.routes = Dictionary(try servedRoutesForTests().compactMap { route in route.operation.map { ($0.id, route) } },
                                uniquingKeysWith: { first, _ in first })
        box.dispatchMatched = { request, _ in core.dispatch(request) }
        let request = HTTPRequest(method: "POST", path: "/graphql",
                                  headers: ["authorization": "Bearer at_caller", "x-app-key": "pk_test",
                                            "content-type": "application/json", "content-length": "99"],
                                  body: Data(), clientIP: "192.0.2.1", peerIP: "192.0.2.1", requestId: "req_gql")
        let caller = OperationCaller(headers: request.headers, clientIP: request.clientIP, peerIP: request.peerIP,
                                     requestId: request.requestId)
        let call = GraphQLCall(operations: Operations(transport: PipelineTransport(pipeline: box)), caller: caller,
                               singleToken: false, sessionToken: { _, _, _ in "" })
        switch Execution.prepare(Request(query: query, variables: variables), schema: IdentitySchema.schema) {
        case .failure(let response):
            XCTFail("refused before execution: \(response.value.json)")
            return response
        case .success(let prepared):
            return await Execution.execute(prepared, schema: IdentitySchema.schema, context: call)
        }
    }

    func body(_ request: HTTPRequest) -> JSONValue? {
        guard case .value(let body) = JSONValue.parseBody(request.body) else { return nil }
        return body
    }

    func testTheSchemaHasBothMutationsAndNeitherSignsIn() throws {
        let mutation = try XCTUnwrap(IdentitySchema.schema.object("Mutation"))
        let start = try XCTUnwrap(mutation.field("startEmailChange"))
        XCTAssertEqual(start.type.description, "SuccessResponse!")
        XCTAssertEqual(start.arguments.map { "\($0.name): \($0.type)" }, ["email: String!"])
        let confirm = try XCTUnwrap(mutation.field("confirmEmailChange"))
        XCTAssertEqual(confirm.type.description, "User!")
        XCTAssertEqual(confirm.arguments.map { "\($0.name): \($0.type)" }, ["code: String!"])
        XCTAssertFalse(IdentitySchema.signInFields.contains("startEmailChange"))
        XCTAssertFalse(IdentitySchema.signInFields.contains("confirmEmailChange"))
        let sdl = SchemaPrinter.print(IdentitySchema.schema)
        XCTAssertTrue(sdl.contains("  startEmailChange(\n"), sdl)
        XCTAssertTrue(sdl.contains("  ): SuccessResponse!\n") && sdl.contains("  ): User!\n"))
    }

    func testStartSendsTheRoutesRequestWithTheCallersBearer() async throws {
        let core = Core { _ in .data(.object(["expires_in": .number(600)]), status: 202) }
        let response = try await run(#"mutation { startEmailChange(email: "new@example.test") { success message } }"#, core: core)
        XCTAssertEqual(response.errors.map(\.message), [])
        XCTAssertEqual(response.data, .object([("startEmailChange", .object([
            ("success", .bool(true)), ("message", .string("A code was sent to the new address."))]))]))
        let sent = try XCTUnwrap(core.requests.first)
        XCTAssertEqual(core.requests.count, 1)
        XCTAssertEqual(sent.method, "POST")
        XCTAssertEqual(sent.path, "/v1/me/email/change")
        XCTAssertEqual(body(sent), .object(["email": .string("new@example.test")]))
        XCTAssertEqual(sent.header("authorization"), "Bearer at_caller")
        XCTAssertEqual(sent.header("x-app-key"), "pk_test")
        XCTAssertEqual(sent.header("content-type"), "application/json")
        XCTAssertEqual(sent.requestId, "req_gql")
    }

    func testConfirmSendsTheAddressAndCodeAndAnswersTheUser() async throws {
        let core = Core { _ in .data(Self.user) }
        let response = try await run("""
            mutation Confirm($code: String!) {
              confirmEmailChange(code: $code) { id email isEmailVerified displayName }
            }
            """, variables: [("code", .string("123456"))], core: core)
        XCTAssertEqual(response.errors.map(\.message), [])
        XCTAssertEqual(response.data, .object([("confirmEmailChange", .object([
            ("id", .string("01j9x6k3m4q5r6s7t8v9w0x1y2")), ("email", .string("new@example.test")),
            ("isEmailVerified", .bool(true)), ("displayName", .string("Jane"))]))]))
        let sent = try XCTUnwrap(core.requests.first)
        XCTAssertEqual(core.requests.count, 1)
        XCTAssertEqual(sent.method, "POST")
        XCTAssertEqual(sent.path, "/v1/me/email/change/confirm")
        XCTAssertEqual(body(sent), .object(["code": .string("123456")]))
        XCTAssertEqual(sent.header("authorization"), "Bearer at_caller")
    }

    func testTheCoresRefusalsAreErrorsWithTheirCodes() async throws {
        let cases: [(String, ServiceError)] = [
            (#"mutation { startEmailChange(email: "new@example.test") { success } }"#, .reauthRequired),
            (#"mutation { startEmailChange(email: "nope") { success } }"#, .invalidEmail()),
            (#"mutation { confirmEmailChange(code: "123456") { id } }"#, .emailAlreadyInUse),
            (#"mutation { confirmEmailChange(code: "000000") { id email } }"#, .invalidCode),
        ]
        for (query, error) in cases {
            let core = Core { .problem(error, requestId: $0.requestId) }
            let response = try await run(query, core: core)
            XCTAssertEqual(response.errors.map(\.code), [error.code], query)
            XCTAssertEqual(response.errors.first?.extensions.first { $0.0 == "status" }?.1, .int(error.status), query)
            // Both fields are non-null: the refusal leaves no data.
            XCTAssertEqual(response.data, .null, query)
            XCTAssertEqual(core.requests.count, 1, query)
        }
    }
}
