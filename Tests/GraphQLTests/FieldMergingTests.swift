import XCTest
@testable import GraphQL

/// The spec's "Field Selection Merging" rule (5.3.2) on a schema shaped like the spec's own
/// examples (Dog, Cat, their commands), with a Human to nest selections deeper.
enum PetSchema {
    static let schema = Schema(
        query: ObjectType("Query", fields: [
            Field("dog", .named("Dog")),
            Field("cat", .named("Cat")),
            Field("human", .named("Human")),
            Field("dogs", .list(.named("Dog")), arguments: [InputValue("filter", .named("Filter")), InputValue("first", .named("Int"))]),
        ]),
        mutation: nil,
        types: [
            .object(ObjectType("Dog", fields: [
                Field("name", .nonNull(.named("String"))),
                Field("nickname", .named("String")),
                Field("barkVolume", .named("Int")),
                Field("doesKnowCommand", .nonNull(.named("Boolean")), arguments: [InputValue("dogCommand", .named("DogCommand"))]),
                Field("owner", .named("Human")),
                Field("friends", .list(.named("Dog"))),
            ])),
            .object(ObjectType("Cat", fields: [
                Field("name", .nonNull(.named("String"))),
                Field("nickname", .named("String")),
                Field("meowVolume", .named("Int")),
                Field("doesKnowCommand", .nonNull(.named("Boolean")), arguments: [InputValue("catCommand", .named("CatCommand"))]),
                Field("owner", .named("Human")),
            ])),
            .object(ObjectType("Human", fields: [
                Field("name", .nonNull(.named("String"))),
                Field("email", .named("String")),
                Field("phone", .named("String")),
                Field("bestFriend", .named("Human")),
                Field("pets", .list(.named("Dog"))),
            ])),
            .enumType(EnumType("DogCommand", values: ["SIT", "DOWN", "HEEL"])),
            .enumType(EnumType("CatCommand", values: ["JUMP"])),
            .inputObject(InputObjectType("Filter", fields: [InputValue("a", .named("String")), InputValue("b", .named("String"))])),
        ])
}

final class FieldMergingTests: XCTestCase {
    func errors(_ query: String) -> [GraphQLError] {
        do {
            return Validator.validate(try Parser.parse(query), schema: PetSchema.schema)
        } catch {
            XCTFail("syntax: \(error)")
            return []
        }
    }

    /// This rule's errors only (a document may break other rules on purpose).
    func conflicts(_ query: String) -> [String] {
        errors(query).map(\.message).filter { $0.contains(" conflict because ") }
    }

    static let advice = " Use different aliases on the fields to fetch both if this was intentional."

    // MARK: the spec's examples

    func testTheSpecsMergeableExamplesAreValid() {
        for document in [
            "{ dog { ...mergeIdenticalFields } } fragment mergeIdenticalFields on Dog { name name }",
            "{ dog { ...mergeIdenticalAliasesAndFields } } fragment mergeIdenticalAliasesAndFields on Dog { otherName: name otherName: name }",
            "{ dog { ...mergeIdenticalFieldsWithIdenticalArgs } } fragment mergeIdenticalFieldsWithIdenticalArgs on Dog { doesKnowCommand(dogCommand: SIT) doesKnowCommand(dogCommand: SIT) }",
            """
            query ($dogCommand: DogCommand) { dog { ...mergeIdenticalFieldsWithIdenticalValues } }
            fragment mergeIdenticalFieldsWithIdenticalValues on Dog { doesKnowCommand(dogCommand: $dogCommand) doesKnowCommand(dogCommand: $dogCommand) }
            """,
            // Argument order and input-object field order do not count (graphql-js agrees).
            "{ dogs(first: 1, filter: {a: \"x\", b: null}) { name } dogs(filter: {b: null, a: \"x\"}, first: 1) { name } }",
            // The same field, its sub-selections merging at every depth.
            "{ human { bestFriend { name pets { name } } } human { bestFriend { pets { name nickname } email } } }",
        ] {
            XCTAssertEqual(errors(document).map(\.message), [], document)
        }
    }

    func testTheSpecsCounterExamplesAreRefused() {
        XCTAssertEqual(errors("{ dog { ...conflictingBecauseAlias } } fragment conflictingBecauseAlias on Dog { name: nickname name }"),
                       [GraphQLError("Fields \"name\" conflict because \"nickname\" and \"name\" are different fields." + Self.advice,
                                     code: GraphQLError.Code.validationFailed, locations: [.init(line: 1, column: 82), .init(line: 1, column: 97)])])
        for document in [
            "{ dog { ...conflictingArgsOnValues } } fragment conflictingArgsOnValues on Dog { doesKnowCommand(dogCommand: SIT) doesKnowCommand(dogCommand: HEEL) }",
            "query ($dogCommand: DogCommand) { dog { ...conflictingArgsValueAndVar } } fragment conflictingArgsValueAndVar on Dog { doesKnowCommand(dogCommand: SIT) doesKnowCommand(dogCommand: $dogCommand) }",
            "query ($varOne: DogCommand, $varTwo: DogCommand) { dog { ...conflictingArgsWithVars } } fragment conflictingArgsWithVars on Dog { doesKnowCommand(dogCommand: $varOne) doesKnowCommand(dogCommand: $varTwo) }",
            "{ dog { ...differingArgs } } fragment differingArgs on Dog { doesKnowCommand(dogCommand: SIT) doesKnowCommand }",
        ] {
            XCTAssertEqual(conflicts(document), ["Fields \"doesKnowCommand\" conflict because they have differing arguments." + Self.advice], document)
        }
    }

    /// The spec's `safeDifferingFields` / `safeDifferingArgs` / `conflictingDifferingResponses`
    /// select on Dog and Cat side by side under an interface. Without interfaces here, such a
    /// document breaks the spread rule too, but this rule's own verdict is still checked: fields
    /// on different object types may differ in name and arguments, never in response shape.
    func testFieldsOnDifferentObjectTypesNeedOnlyTheSameShape() {
        XCTAssertEqual(conflicts("{ dog { ...safeDifferingFields } } fragment safeDifferingFields on Dog { ... on Dog { volume: barkVolume } ... on Cat { volume: meowVolume } }"), [])
        XCTAssertEqual(conflicts("{ dog { ...safeDifferingArgs } } fragment safeDifferingArgs on Dog { ... on Dog { doesKnowCommand(dogCommand: SIT) } ... on Cat { doesKnowCommand(catCommand: JUMP) } }"), [])
        XCTAssertEqual(conflicts("{ dog { ...conflictingDifferingResponses } } fragment conflictingDifferingResponses on Dog { ... on Dog { someValue: nickname } ... on Cat { someValue: meowVolume } }"),
                       ["Fields \"someValue\" conflict because they return conflicting types \"String\" and \"Int\"." + Self.advice])
        XCTAssertEqual(conflicts("{ dog { ... on Dog { n: name } ... on Cat { n: nickname } } }"),
                       ["Fields \"n\" conflict because they return conflicting types \"String!\" and \"String\"." + Self.advice], "non-null must match")
        XCTAssertEqual(conflicts("{ dog { ... on Dog { o: owner { v: name } } ... on Cat { o: owner { v: pets { name } } } } }"),
                       ["Fields \"o\" conflict because subfields \"v\" conflict because they return conflicting types \"String!\" and \"[Dog]\"." + Self.advice],
                       "shapes are compared through sub-selections")
    }

    // MARK: at every depth

    func testAConflictTwoLevelsDownIsRefusedNamingItsPath() {
        let document = """
        {
          human { bestFriend { contact: email } }
          human { bestFriend { contact: phone } }
        }
        """
        XCTAssertEqual(errors(document), [GraphQLError(
            "Fields \"human\" conflict because subfields \"bestFriend\" conflict because subfields \"contact\" conflict because \"email\" and \"phone\" are different fields." + Self.advice,
            code: GraphQLError.Code.validationFailed,
            locations: [.init(line: 2, column: 3), .init(line: 2, column: 11), .init(line: 2, column: 24),
                        .init(line: 3, column: 3), .init(line: 3, column: 11), .init(line: 3, column: 24)])])
        XCTAssertEqual(conflicts("{ human { bestFriend { pets { n: name } } } human { bestFriend { pets { n: name(x: 1) } } } }").count, 1,
                       "arguments three levels down")
        XCTAssertEqual(conflicts("{ human { bestFriend { pets { n: name } } } human { bestFriend { pets { n: friends { name } } } } }"),
                       ["Fields \"human\" conflict because subfields \"bestFriend\" conflict because subfields \"pets\" conflict because subfields \"n\" conflict because \"name\" and \"friends\" are different fields." + Self.advice])
    }

    func testConflictsAreNamedFromTheNearestSetHoldingBoth() {
        // graphql-js "reports deep conflict to nearest common ancestor".
        XCTAssertEqual(conflicts("""
        {
          human { bestFriend { x: name } bestFriend { x: email } }
          human { bestFriend { phone } }
        }
        """), ["Fields \"bestFriend\" conflict because subfields \"x\" conflict because \"name\" and \"email\" are different fields." + Self.advice])
        // A field in conflict with its key still has its own selection set checked.
        XCTAssertEqual(conflicts("{ human: dog { name } human { bestFriend { n: name n: email } } }"), [
            "Fields \"human\" conflict because \"dog\" and \"human\" are different fields." + Self.advice,
            "Fields \"n\" conflict because \"name\" and \"email\" are different fields." + Self.advice,
        ])
        // A conflict inside one nested set, met once however it is reached.
        XCTAssertEqual(conflicts("{ human { ...F } h: human { ...F } } fragment F on Human { bestFriend { n: name n: email } }"),
                       ["Fields \"n\" conflict because \"name\" and \"email\" are different fields." + Self.advice])
    }

    func testConflictsThroughFragmentSpreadsAndInlineFragments() {
        // graphql-js "encounters conflict in fragments".
        XCTAssertEqual(conflicts("{ human { ...A ...B } } fragment A on Human { x: name } fragment B on Human { x: email }"),
                       ["Fields \"x\" conflict because \"name\" and \"email\" are different fields." + Self.advice])
        // graphql-js "reports deep conflict in nested fragments": two fields, each half in a
        // fragment spread in a fragment.
        let nested = conflicts("""
        { human { bestFriend { ...F } } human { bestFriend { ...I } } }
        fragment F on Human { x: name ...G }
        fragment G on Human { y: email }
        fragment I on Human { y: phone ...J }
        fragment J on Human { x: email }
        """)
        XCTAssertEqual(Set(nested), [
            "Fields \"human\" conflict because subfields \"bestFriend\" conflict because subfields \"x\" conflict because \"name\" and \"email\" are different fields." + Self.advice,
            "Fields \"human\" conflict because subfields \"bestFriend\" conflict because subfields \"y\" conflict because \"email\" and \"phone\" are different fields." + Self.advice,
        ])
        XCTAssertEqual(nested.count, 2)
        XCTAssertEqual(conflicts("{ human { bestFriend { ... { n: name } } bestFriend { ... on Human { n: email } } } }"),
                       ["Fields \"bestFriend\" conflict because subfields \"n\" conflict because \"name\" and \"email\" are different fields." + Self.advice])
        // graphql-js "reports each conflict once": the same two fragments side by side in
        // three places give one error for their pair.
        let once = conflicts("""
        { a: human { ...A ...B } b: human { ...B ...A } c: human { ...A ...B x: phone } }
        fragment A on Human { x: name }
        fragment B on Human { x: email }
        """)
        XCTAssertEqual(once.filter { $0.contains("\"name\" and \"email\"") }.count, 1, "\(once)")
        XCTAssertTrue(once.contains { $0.contains("\"phone\"") }, "\(once)")
        // Fragments unknown or spread in a cycle are other rules' business, not a crash here.
        XCTAssertEqual(conflicts("{ human { name ...Unknown ...Known } } fragment Known on Human { name ...OtherUnknown }"), [])
        XCTAssertEqual(conflicts("{ human { ...A } } fragment A on Human { bestFriend { ...A } name }"), [])
    }

    // MARK: hostile documents stay cheap

    /// Each fragment spreads the next under the same key several times over, forty deep: the
    /// expanded document is astronomically large, so only a walk that checks each merged set
    /// once answers. (No timing is asserted: the test finishing is the point.)
    func testManyNestedSpreadsOfTheSameKeyAreValidatedOnce() {
        let levels = 40
        var document = "{ human { ...F0 } }\n"
        for level in 0..<levels {
            let next = "F\(level + 1)"
            document += "fragment F\(level) on Human { bestFriend { ...\(next) } bestFriend { ...\(next) name } bf: bestFriend { ...\(next) } ...\(next) ...\(next) }\n"
        }
        document += "fragment F\(levels) on Human { name }"
        let found = errors(document).map(\.message)
        XCTAssertTrue(found.contains { $0.contains("levels deep") }, "\(found)")
        XCTAssertFalse(found.contains { $0.contains(" conflict because ") }, "\(found)")
        // The same shape, with a conflict at the bottom: still found, still once.
        let conflicting = document.replacingOccurrences(of: "fragment F\(levels) on Human { name }",
                                                        with: "fragment F\(levels) on Human { name name: email }")
        let conflictsFound = conflicts(conflicting)
        XCTAssertEqual(conflictsFound.count, 1, "\(conflictsFound)")
        XCTAssertTrue(conflictsFound.first?.hasPrefix("Fields \"name\" conflict because") == true, "\(conflictsFound)")
    }

    /// Fragments that spread the next one four times at the same level: this once cost the
    /// depth and variable walk exponential time, before any merging was checked.
    func testFragmentsSpreadingTheNextManyTimesAtOneLevel() {
        var document = "{ human { ...F0 } }\n"
        for level in 0..<30 {
            document += "fragment F\(level) on Human { ...F\(level + 1) ...F\(level + 1) ...F\(level + 1) ...F\(level + 1) }\n"
        }
        document += "fragment F30 on Human { name }"
        XCTAssertEqual(errors(document).map(\.message), [])
    }

    /// Fragments nest inside fragments with no syntax limit: the walks stop where every depth
    /// limit is broken anyway, and say so without inventing other errors.
    func testFragmentsNestingPastEveryDepthLimitAreCutOff() {
        var document = "{ human { ...F0 } }\n"
        for level in 0..<60 {
            document += "fragment F\(level) on Human { " + String(repeating: "bestFriend { ", count: 60) + "...F\(level + 1)"
                + String(repeating: " }", count: 60) + " }\n"
        }
        document += "fragment F60 on Human { name }"
        XCTAssertEqual(errors(document).map(\.message), ["The operation nests at least 30 levels deep; at most 10 are allowed."])
    }

    /// A long chain of fragments, each spreading the next, is one merged set, not one per
    /// fragment: it must not run into the work budget.
    func testALongChainOfFragmentsIsCheckedOnce() {
        var document = "{ human { ...F0 } }\n"
        for level in 0..<1_500 { document += "fragment F\(level) on Human { ...F\(level + 1) }\n" }
        document += "fragment F1500 on Human { name }"
        XCTAssertEqual(errors(document).map(\.message), [])
    }

    func testThousandsOfTheSameFieldAreOneGroup() {
        let flat = "{ human { " + String(repeating: "name ", count: 10_000) + "} }"
        XCTAssertEqual(errors(flat).map(\.message), [])
        let nested = "{ " + String(repeating: "human { bestFriend { pets { name } } } ", count: 3_000) + "}"
        XCTAssertEqual(errors(nested).map(\.message), [])
        let oneOff = "{ " + String(repeating: "human { bestFriend { pets { name } } } ", count: 3_000) + "human { bestFriend { pets { name: nickname } } } }"
        XCTAssertEqual(conflicts(oneOff).count, 1)
    }

    func testADocumentPastTheWorkBudgetIsRefused() {
        let huge = "{ human { " + String(repeating: "name ", count: FieldMerging.workBudget) + "} }"
        XCTAssertTrue(errors(huge).contains { $0.message.contains("too many overlapping fields") })
    }
}
