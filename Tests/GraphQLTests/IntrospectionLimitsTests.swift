import XCTest
@testable import GraphQL

/// graphql-core's `get_introspection_query()` (what GraphiQL, Apollo and codegen send, give or
/// take options): the document every introspection limit must let through.
enum StandardIntrospection {
    static let typeRef = "kind name " + String(repeating: "ofType { kind name ", count: 8) + "ofType { kind name }"
        + String(repeating: " }", count: 8)
    static let query = """
    query IntrospectionQuery {
      __schema {
        queryType { name } mutationType { name } subscriptionType { name }
        types { ...FullType }
        directives { name description locations args { ...InputValue } }
      }
    }
    fragment FullType on __Type {
      kind name description
      fields(includeDeprecated: true) { name description args { ...InputValue } type { ...TypeRef } isDeprecated deprecationReason }
      inputFields { ...InputValue }
      interfaces { ...TypeRef }
      enumValues(includeDeprecated: true) { name description isDeprecated deprecationReason }
      possibleTypes { ...TypeRef }
    }
    fragment InputValue on __InputValue { name description type { ...TypeRef } defaultValue }
    fragment TypeRef on __Type { \(typeRef) }
    """
}

final class IntrospectionListsTests: XCTestCase {
    private func refusal(_ query: String) -> [String] {
        guard let document = try? Parser.parse(query) else { return ["syntax"] }
        return Validator.validate(document, schema: TestSchema.schema).map(\.message)
    }

    func testTheStandardQueryAndTwoNestedListsPass() {
        XCTAssertEqual(refusal(StandardIntrospection.query), [])
        XCTAssertEqual(refusal("{ __schema { types { fields { type { fields { name } } } } } }"), [])
        XCTAssertEqual(refusal(#"{ __type(name: "User") { fields { type { ofType { inputFields { name } } } } } }"#), [])
    }

    func testThreeNestedListsAreRefusedAsGraphQLCoreRefusesThem() {
        let message = IntrospectionLists.message
        XCTAssertEqual(refusal("{ __schema { types { fields { type { fields { type { fields { name } } } } } } } }"), [message])
        XCTAssertEqual(refusal(#"{ __type(name: "User") { fields { type { inputFields { type { fields { name } } } } } } }"#), [message])
        XCTAssertEqual(refusal(#"{ __type(name: "User") { interfaces { possibleTypes { fields { name } } } } }"#), [message])
        // Through fragments and inline fragments, and from a fragment on Query.
        XCTAssertEqual(refusal("""
        { __schema { types { ...A } } }
        fragment A on __Type { fields { type { ... on __Type { ...B } } } }
        fragment B on __Type { fields { type { fields { name } } } }
        """), [message])
        XCTAssertEqual(refusal("""
        { ...Q }
        fragment Q on Query { __schema { types { fields { type { fields { type { fields { name } } } } } } } }
        """), [message])
    }

    func testFragmentsSpreadManyTimesAreWalkedOncePerFragment() {
        // Each fragment spreads the next four times: a walk per path would take 4^40 steps.
        let chain = (0..<40).map { "fragment F\($0) on __Type { name ofType { ...F\($0 + 1) ...F\($0 + 1) } ...F\($0 + 1) ...F\($0 + 1) }" }
        let query = #"{ __type(name: "User") { ...F0 } } "# + chain.joined(separator: " ") + " fragment F40 on __Type { fields { name } }"
        let started = Date()
        XCTAssertFalse(refusal(query).contains(IntrospectionLists.message))
        XCTAssertLessThan(Date().timeIntervalSince(started), 5)
    }
}

final class IntrospectionBudgetTests: XCTestCase {
    private func run(_ query: String, limits: Limits) async -> Response {
        switch Execution.prepare(Request(query: query), schema: TestSchema.schema, limits: limits) {
        case .failure(let response): return response
        case .success(let prepared): return await Execution.execute(prepared, schema: TestSchema.schema, context: ())
        }
    }

    func testTheStandardQueryFitsTheDefaultBudget() async {
        let response = await run(StandardIntrospection.query, limits: Limits())
        XCTAssertEqual(response.errors, [])
        XCTAssertNotNil(response.data?["__schema"]?["types"])
    }

    func testPastTheBudgetTheAnswerIsOneErrorAndNoData() async {
        let query = "{ a: __schema { types { name } } b: __schema { types { name kind } } hello }"
        let types = TestSchema.schema.typeNames.count
        // `a` and `b`, their `types`, each type's `name` (and `kind`): exactly the budget passes.
        let exact = 4 + 3 * types
        let fits = await run(query, limits: Limits(maximumIntrospectionFields: exact))
        XCTAssertEqual(fits.errors, [])
        XCTAssertEqual(fits.data?["hello"], .string("hello world"))
        let over = await run(query, limits: Limits(maximumIntrospectionFields: exact - 1))
        XCTAssertEqual(over.errors.map(\.message), [IntrospectionBudget(maximum: exact - 1).error.message])
        XCTAssertEqual(over.data, .null)
        XCTAssertEqual(over.value.json.hasPrefix(#"{"errors":[{"message":"The introspection answer would have more than"#), true)
    }

    func testExecutionStopsOnceTheBudgetIsSpent() async throws {
        guard case .success(let prepared) = Execution.prepare(Request(query: StandardIntrospection.query), schema: TestSchema.schema) else {
            return XCTFail("the standard query is valid")
        }
        let budget = IntrospectionBudget(maximum: 10)
        let executor = Executor(schema: TestSchema.schema, fragments: Dictionary(uniqueKeysWithValues: prepared.document.fragments.map { ($0.name, $0) }),
                                variables: [:], context: (), budget: budget)
        _ = await executor.executeSelections(prepared.operation.selectionSet, objectType: "Query", parent: .null, path: [])
        XCTAssertTrue(budget.exceeded)
        // What was pending when it ran out asks once each and unwinds: far from the whole
        // answer's fields (about a thousand for this schema).
        XCTAssertLessThan(budget.spent, 40)
    }

    func testUserFieldsAndTypenameOnUserTypesAreNotCounted() async {
        let response = await run(#"{ __typename hello user(id: "1") { __typename id friends { id } } }"#,
                                 limits: Limits(maximumIntrospectionFields: 0))
        XCTAssertEqual(response.errors, [])
        XCTAssertEqual(response.data?["user"]?["__typename"], .string("User"))
    }
}
