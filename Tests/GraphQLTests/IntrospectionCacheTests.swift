import XCTest
@testable import GraphQL

final class IntrospectionCacheTests: XCTestCase {
    /// Prepares and executes `request` as the gateway does: the kept answer when there is one,
    /// else the executed one, kept when it may be. Returns the answer and whether it was kept.
    private func answer(_ request: Request, _ cache: IntrospectionCache) async -> (json: String, cached: Bool) {
        if let kept = cache.answer(for: request) { return (kept, true) }
        switch Execution.prepare(request, schema: TestSchema.schema) {
        case .failure(let response): return (response.value.json, false)
        case .success(let prepared):
            let json = await Execution.execute(prepared, schema: TestSchema.schema, context: ()).value.json
            cache.keep(json, for: request, prepared: prepared, schema: TestSchema.schema)
            return (json, false)
        }
    }

    func testTheKeptAnswerIsTheExecutedOneByteForByte() async {
        let cache = IntrospectionCache()
        let request = Request(query: StandardIntrospection.query)
        let first = await answer(request, cache)
        let second = await answer(request, cache)
        XCTAssertFalse(first.cached)
        XCTAssertTrue(second.cached)
        XCTAssertEqual(second.json, first.json)
        // A fresh cache executes it again: the same bytes.
        let uncached = await answer(request, IntrospectionCache())
        XCTAssertFalse(uncached.cached)
        XCTAssertEqual(uncached.json, first.json)
        XCTAssertTrue(first.json.hasPrefix(#"{"data":{"__schema":{"queryType":{"name":"Query"}"#), first.json)
    }

    func testOnlyIntrospectionQueriesAreKept() async {
        let cache = IntrospectionCache()
        for query in ["{ __typename hello }", "mutation { __typename }", #"{ user(id: "1") { __typename } }"#, "{ __schema { nope } }"] {
            _ = await answer(Request(query: query), cache)
            let again = await answer(Request(query: query), cache)
            XCTAssertFalse(again.cached, query)
        }
        XCTAssertEqual(cache.count, 0)
        // Root fields left out by @skip do not count; one left in does.
        _ = await answer(Request(query: "{ __typename hello @skip(if: true) }"), cache)
        _ = await answer(Request(query: "query ($s: Boolean!) { __typename hello @skip(if: $s) }", variables: [("s", .bool(false))]), cache)
        XCTAssertEqual(cache.count, 1)
    }

    func testOperationNameAndVariablesArePartOfTheKey() async {
        let cache = IntrospectionCache()
        let query = "query A { __typename } query B($n: String!) { __type(name: $n) { name } }"
        let a = await answer(Request(query: query, operationName: "A"), cache)
        let user = await answer(Request(query: query, variables: [("n", .string("User"))], operationName: "B"), cache)
        let color = await answer(Request(query: query, variables: [("n", .string("Color"))], operationName: "B"), cache)
        XCTAssertEqual(a.json, #"{"data":{"__typename":"Query"}}"#)
        XCTAssertEqual(user.json, #"{"data":{"__type":{"name":"User"}}}"#)
        XCTAssertEqual(color.json, #"{"data":{"__type":{"name":"Color"}}}"#)
        let userAgain = await answer(Request(query: query, variables: [("n", .string("User"))], operationName: "B"), cache)
        XCTAssertEqual(userAgain.cached, true)
        XCTAssertEqual(userAgain.json, user.json)
        XCTAssertEqual(cache.count, 3)
    }

    func testAtMostCapacityAnswersTheLeastRecentlyUsedGoes() async {
        let cache = IntrospectionCache(capacity: 2)
        let a = Request(query: "query A { __typename }"), b = Request(query: "query B { __typename }"), c = Request(query: "query C { __typename }")
        _ = await answer(a, cache)
        _ = await answer(b, cache)
        _ = await answer(a, cache)  // a used after b
        _ = await answer(c, cache)  // b goes
        XCTAssertEqual(cache.count, 2)
        XCTAssertNotNil(cache.answer(for: a))
        XCTAssertNil(cache.answer(for: b))
        XCTAssertNotNil(cache.answer(for: c))
    }

    func testAnAnswerOverTheSizeBoundIsNotKept() async {
        let cache = IntrospectionCache(maximumAnswerBytes: 1000)
        _ = await answer(Request(query: StandardIntrospection.query), cache)
        _ = await answer(Request(query: "{ __typename }"), cache)
        XCTAssertEqual(cache.count, 1)
        XCTAssertNil(cache.answer(for: Request(query: StandardIntrospection.query)))
    }
}
