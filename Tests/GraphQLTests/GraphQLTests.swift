import XCTest
@testable import GraphQL

/// A small schema with resolvers that need no service: the parser, validation, executor and
/// introspection are checked here on their own.
enum TestSchema {
    static let schema = Schema(
        query: ObjectType("Query", fields: [
            Field("hello", .nonNull(.named("String")), arguments: [InputValue("name", .named("String"), defaultValue: .string("world"))]) { info in
                .string("hello " + (info.argument("name").string ?? "?"))
            },
            Field("user", .named("User"), arguments: [InputValue("id", .nonNull(.named("ID")))]) { info in
                guard info.argument("id") == .string("1") else { return .null }
                return .object([("id", .string("1")), ("name", .string("Ada")), ("friends", .list([.object([("id", .string("2")), ("name", .null)])]))])
            },
            Field("boom", .named("String")) { _ in throw GraphQLError("no", code: "auth/nope") },
            Field("strict", .nonNull(.named("String"))) { _ in .null },
            Field("count", .nonNull(.named("Int")), arguments: [InputValue("n", .nonNull(.named("Int")))]) { info in info.argument("n") },
            Field("echo", .named("JSON"), arguments: [InputValue("value", .named("JSON"))]) { info in info.argument("value") },
            Field("color", .named("Color"), arguments: [InputValue("c", .named("Color"))]) { info in info.argument("c") },
        ]),
        mutation: ObjectType("Mutation", fields: [
            Field("login", .named("String"), arguments: [InputValue("input", .nonNull(.named("LoginInput")))]) { info in
                .string((info.argument("input")["identifier"]?.string ?? "") + "/" + (info.argument("input")["remember"] == .bool(true) ? "r" : "-"))
            },
        ]),
        types: [
            .object(ObjectType("User", fields: [Field("id", .nonNull(.named("ID"))), Field("name", .nonNull(.named("String"))),
                                                Field("friends", .list(.named("User")))])),
            .inputObject(InputObjectType("LoginInput", fields: [InputValue("identifier", .nonNull(.named("String"))),
                                                                InputValue("remember", .named("Boolean"), defaultValue: .bool(false))])),
            .enumType(EnumType("Color", values: ["RED", "GREEN"])),
            .scalar(ScalarType("JSON", kind: .json)),
        ])

    static func run(_ query: String, variables: [(String, GraphQLValue)] = [], operationName: String? = nil) async -> Response {
        switch Execution.prepare(Request(query: query, variables: variables, operationName: operationName), schema: schema) {
        case .failure(let response): return response
        case .success(let prepared): return await Execution.execute(prepared, schema: schema, context: ())
        }
    }
}

final class ParserTests: XCTestCase {
    func testOperationsFragmentsVariablesDirectives() throws {
        let document = try Parser.parse("""
        # a comment
        query Q($id: ID! = "1", $flags: [Boolean!]) @skip(if: false) {
          u: user(id: $id) { ...F ... on User { name } ... @include(if: true) { id } }
        }
        fragment F on User { id, name }
        mutation { login(input: {identifier: "a", remember: true}) }
        """)
        XCTAssertEqual(document.operations.count, 2)
        XCTAssertEqual(document.fragments.map(\.name), ["F"])
        let query = document.operations[0]
        XCTAssertEqual(query.name, "Q")
        XCTAssertEqual(query.variables.map(\.type.description), ["ID!", "[Boolean!]"])
        guard case .field(let field) = query.selectionSet[0] else { return XCTFail() }
        XCTAssertEqual(field.alias, "u")
        XCTAssertEqual(field.selectionSet?.count, 3)
        XCTAssertEqual(document.operations[1].type, .mutation)
    }

    func testStringsAndBlockStrings() throws {
        let document = try Parser.parse(#"{ a(x: "tab\tq\"\u00e9\u{1F600}\uD83D\uDE00", y: """\#n    first\#n      second\#n    \""" end\#n  """) }"#)
        guard case .field(let field) = document.operations[0].selectionSet[0] else { return XCTFail() }
        guard case .string(let x) = field.arguments[0].value, case .string(let y) = field.arguments[1].value else { return XCTFail() }
        XCTAssertEqual(x, "tab\tq\"é😀😀")
        XCTAssertEqual(y, "first\n  second\n\"\"\" end")
    }

    func testNumbers() throws {
        let document = try Parser.parse("{ a(i: -12, f: 1.5e3, z: 0) }")
        guard case .field(let field) = document.operations[0].selectionSet[0] else { return XCTFail() }
        guard case .int("-12") = field.arguments[0].value, case .float("1.5e3") = field.arguments[1].value else { return XCTFail() }
    }

    func testSyntaxErrorsHaveLocations() {
        for (source, line, column) in [("{ a(x: 01) }", 1, 9), ("{\n  a(\n}", 3, 1), ("query { a", 1, 10), ("{ a(x: \"open) }", 1, 16), ("1", 1, 1)] {
            XCTAssertThrowsError(try Parser.parse(source), source) { error in
                let error = error as! GraphQLError
                XCTAssertEqual(error.code, GraphQLError.Code.parseFailed)
                XCTAssertEqual(error.locations.first, .init(line: line, column: column), source)
            }
        }
    }

    func testDeepNestingIsASyntaxErrorNotACrash() {
        let deep = String(repeating: "{ a ", count: 10_000) + String(repeating: "}", count: 10_000)
        XCTAssertThrowsError(try Parser.parse(deep))
        let list = "{ a(x: " + String(repeating: "[", count: 100_000) + ") }"
        XCTAssertThrowsError(try Parser.parse(list))
    }

    func testTypeSystemDefinitionsAreNotExecutable() {
        XCTAssertThrowsError(try Parser.parse("type Query { a: String }"))
    }
}

final class ValidationTests: XCTestCase {
    func messages(_ query: String) -> [String] {
        guard let document = try? Parser.parse(query) else { return ["syntax"] }
        return Validator.validate(document, schema: TestSchema.schema).map(\.message)
    }

    func testValidDocumentsPass() {
        XCTAssertEqual(messages(#"query Q($id: ID!) { user(id: $id) { ...F friends { id } } } fragment F on User { id name }"#), [])
        XCTAssertEqual(messages(#"{ hello @skip(if: true) color(c: RED) echo(value: {a: [1, "x", null]}) }"#), [])
        XCTAssertEqual(messages(#"query ($r: Boolean = true) { hello(name: "x") } mutation M($r: Boolean) { login(input: {identifier: "a", remember: $r}) }"#).count, 2)
    }

    func testRules() {
        let cases: [(String, String)] = [
            ("{ nope }", "Cannot query field \"nope\" on type \"Query\"."),
            ("{ user(id: \"1\") }", "must have a selection of subfields"),
            ("{ hello { x } }", "must not have a selection"),
            ("{ user { id } }", "argument \"id\" of type \"ID!\" is required"),
            ("{ hello(nope: 1) }", "Unknown argument \"nope\""),
            ("{ count(n: \"1\") }", "Int cannot represent"),
            ("{ count(n: 3000000000) }", "32-bit"),
            ("{ color(c: BLUE) }", "does not exist in \"Color\" enum"),
            ("query Q($n: Int) { count(n: $n) }", "used in position expecting type \"Int!\""),
            ("query Q($n: Int!) { hello }", "is never used"),
            ("{ count(n: $n) }", "Variable \"$n\" is not defined"),
            ("{ ...F }", "Unknown fragment \"F\""),
            ("{ hello } fragment F on Query { hello }", "Fragment \"F\" is never used"),
            ("{ ...A } fragment A on Query { ...B } fragment B on Query { ...A }", "Cannot spread fragment \"A\" within itself via B"),
            ("{ user(id: 1) { ...F } } fragment F on Query { hello }", "can never be of type"),
            ("query A { hello } query A { hello }", "only one operation named \"A\""),
            ("{ hello } query B { hello }", "anonymous operation must be the only"),
            ("{ hello @nope }", "Unknown directive"),
            ("{ hello: boom hello }", "are different fields"),
            ("mutation { login(input: {identifier: \"a\", extra: 1}) }", "Field \"extra\" is not defined by type \"LoginInput\""),
            ("mutation { login(input: {}) }", "was not provided"),
            ("subscription { hello }", "subscription"),
            ("query ($x: User) { hello }", "cannot be non-input type"),
        ]
        for (query, expected) in cases {
            let found = messages(query)
            XCTAssertTrue(found.contains { $0.contains(expected) }, "\(query): \(found)")
        }
    }

    func testLimits() {
        let deep = "{ user(id: 1) { " + String(repeating: "friends { ", count: 10) + "id" + String(repeating: " }", count: 10) + " } }"
        XCTAssertTrue(messages(deep).contains { $0.contains("levels deep") })
        let aliases = "{ " + (0..<51).map { "a\($0): hello" }.joined(separator: " ") + " }"
        XCTAssertTrue(messages(aliases).contains { $0.contains("aliases") })
        let introspection = "{ __type(name: \"User\") { " + String(repeating: "ofType { ", count: 14) + "name" + String(repeating: " }", count: 14) + " } }"
        XCTAssertEqual(messages(introspection), [], "the standard introspection query's depth")
        let deepIntrospection = "{ __type(name: \"User\") { " + String(repeating: "ofType { ", count: 25) + "name" + String(repeating: " }", count: 25) + " } }"
        XCTAssertTrue(messages(deepIntrospection).contains { $0.contains("introspection nests") })
        let okAliases = "{ " + (0..<50).map { "a\($0): hello" }.joined(separator: " ") + " }"
        XCTAssertEqual(messages(okAliases), [])
    }
}

final class ExecutionTests: XCTestCase {
    func testResultsInQueryOrderWithAliasesFragmentsAndDirectives() async {
        let response = await TestSchema.run(#"""
        query Q($id: ID!, $skip: Boolean!) {
          b: hello(name: "b")
          user(id: $id) { ...F friends { name } }
          hello @skip(if: $skip)
          __typename
        }
        fragment F on User { name id @include(if: false) }
        """#, variables: [("id", .int(1)), ("skip", .bool(true))])
        // friends[0].name is null though `String!`: friend 0 becomes null (its type, User, is nullable).
        XCTAssertEqual(response.data?.json, #"{"b":"hello b","user":{"name":"Ada","friends":[null]},"__typename":"Query"}"#)
        XCTAssertEqual(response.errors.map(\.path), [[.string("user"), .string("friends"), .int(0), .string("name")]])
    }

    func testResolverErrorsAndNullPropagation() async {
        let response = await TestSchema.run("{ boom hello }")
        XCTAssertEqual(response.value.json,
                       #"{"errors":[{"message":"no","locations":[{"line":1,"column":3}],"path":["boom"],"extensions":{"code":"auth/nope"}}],"data":{"boom":null,"hello":"hello world"}}"#)
        let strict = await TestSchema.run("{ strict hello }")
        XCTAssertEqual(strict.data, .null)
        XCTAssertEqual(strict.errors.count, 1)
    }

    func testVariablesAreCoerced() async {
        let missing = await TestSchema.run("query Q($n: Int!) { count(n: $n) }")
        XCTAssertNil(missing.data)
        XCTAssertEqual(missing.errors.first?.code, GraphQLError.Code.badUserInput)
        let wrong = await TestSchema.run("query Q($n: Int!) { count(n: $n) }", variables: [("n", .string("1"))])
        XCTAssertNil(wrong.data)
        let input = await TestSchema.run("mutation M($i: LoginInput!) { login(input: $i) }",
                                         variables: [("i", .object([("identifier", .string("me"))]))])
        XCTAssertEqual(input.data, .object([("login", .string("me/-"))]))
        let json = await TestSchema.run("query Q($v: JSON) { echo(value: $v) }", variables: [("v", .object([("a", .list([.int(1)]))]))])
        XCTAssertEqual(json.value.json, #"{"data":{"echo":{"a":[1]}}}"#)
    }

    func testOperationName() async {
        let two = "query A { hello } query B { __typename }"
        let b = await TestSchema.run(two, operationName: "B")
        XCTAssertEqual(b.value.json, #"{"data":{"__typename":"Query"}}"#)
        let none = await TestSchema.run(two)
        XCTAssertEqual(none.errors.first?.code, GraphQLError.Code.operationNotFound)
    }

    func testIntrospection() async {
        let response = await TestSchema.run("""
        { __schema { queryType { name } mutationType { name } types { name kind } directives { name } }
          __type(name: "LoginInput") { kind inputFields { name defaultValue type { kind ofType { name } } } }
          user: __type(name: "User") { fields { name type { kind name ofType { kind name } } } } }
        """)
        XCTAssertTrue(response.errors.isEmpty, "\(response.errors)")
        let json = response.value.json
        XCTAssertTrue(json.contains(#""queryType":{"name":"Query"}"#))
        XCTAssertTrue(json.contains(#"{"name":"remember","defaultValue":"false","type":{"kind":"SCALAR","ofType":null}}"#), json)
        XCTAssertTrue(json.contains(#"{"name":"id","type":{"kind":"NON_NULL","name":null,"ofType":{"kind":"SCALAR","name":"ID"}}}"#), json)
        XCTAssertTrue(json.contains(#"{"name":"__TypeKind","kind":"ENUM"}"#))
    }

    func testPrintedSchema() {
        let sdl = SchemaPrinter.print(TestSchema.schema)
        XCTAssertTrue(sdl.contains("type Query {\n  hello(name: String = \"world\"): String!"), sdl)
        XCTAssertTrue(sdl.contains("input LoginInput {\n  identifier: String!\n  remember: Boolean = false\n}"), sdl)
        XCTAssertTrue(sdl.contains("enum Color {\n  RED\n  GREEN\n}"))
        XCTAssertFalse(sdl.contains("__Schema"))
        XCTAssertFalse(sdl.contains("scalar String"))
    }
}
