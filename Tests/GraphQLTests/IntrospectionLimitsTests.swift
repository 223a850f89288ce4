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
