/// Validation of a document against a schema (spec section 5): the rules graphql-core
/// applies to an executable document for a schema of objects, inputs, enums and scalars
/// (no interfaces or unions here), plus this server's limits on depth and aliases. A document
/// with any error is not executed.
public struct Limits: Sendable {
    public var maximumDepth: Int
    public var maximumAliases: Int
    /// Introspection's own depth (under `__schema` / `__type`): the standard introspection
    /// query of GraphiQL, Apollo and graphql-core nests 15 levels for its `ofType` chain, so
    /// it has a limit of its own rather than the operation's.
    public var maximumIntrospectionDepth: Int
    /// Introspection fields one execution completes (`IntrospectionBudget`): the standard
    /// introspection query of seed 003's schema completes about 2,600.
    public var maximumIntrospectionFields: Int

    public init(maximumDepth: Int = 10, maximumAliases: Int = 50, maximumIntrospectionDepth: Int = 20,
                maximumIntrospectionFields: Int = 10_000) {
        self.maximumDepth = maximumDepth
        self.maximumAliases = maximumAliases
        self.maximumIntrospectionDepth = maximumIntrospectionDepth
        self.maximumIntrospectionFields = maximumIntrospectionFields
    }
}

public struct Validator {
    let schema: Schema
    let document: Document
    let limits: Limits
    private var errors: [GraphQLError] = []
    private var fragments: [String: FragmentDefinition] = [:]

    public static let maximumErrors = 100

    public static func validate(_ document: Document, schema: Schema, limits: Limits = Limits()) -> [GraphQLError] {
        var validator = Validator(schema: schema, document: document, limits: limits)
        validator.run()
        return Array(validator.errors.prefix(maximumErrors))
    }

    private init(schema: Schema, document: Document, limits: Limits) {
        self.schema = schema
        self.document = document
        self.limits = limits
    }

    private mutating func fail(_ message: String, _ locations: [GraphQLError.Location]) {
        guard errors.count < Self.maximumErrors else { return }
        errors.append(GraphQLError(message, code: GraphQLError.Code.validationFailed, locations: locations))
    }

    private mutating func run() {
        // Fragments: unique names, known composite type conditions, no cycles, all used.
        for fragment in document.fragments {
            if fragments[fragment.name] != nil {
                fail("There can be only one fragment named \"\(fragment.name)\".", [fragment.location])
            } else {
                fragments[fragment.name] = fragment
            }
        }
        for fragment in document.fragments where fragments[fragment.name]?.location == fragment.location {
            checkTypeCondition(fragment.typeCondition, location: fragment.location, fragmentName: fragment.name)
        }
        checkFragmentCycles()
        for field in IntrospectionLists.tooDeep(document, fragments: fragments) {
            fail(IntrospectionLists.message, [field.location])
        }
        // Operations.
        var names: Set<String> = []
        for operation in document.operations {
            if let name = operation.name {
                if !names.insert(name).inserted { fail("There can be only one operation named \"\(name)\".", [operation.location]) }
            } else if document.operations.count > 1 {
                fail("This anonymous operation must be the only defined operation.", [operation.location])
            }
        }
        var usedFragments: Set<String> = []
        for operation in document.operations { validate(operation, usedFragments: &usedFragments) }
        for fragment in document.fragments where !usedFragments.contains(fragment.name) {
            fail("Fragment \"\(fragment.name)\" is never used.", [fragment.location])
        }
        // Fragment bodies are checked once each, against their own type condition.
        for fragment in fragments.values where schema.object(fragment.typeCondition) != nil {
            checkDirectives(fragment.directives, location: "FRAGMENT_DEFINITION")
            checkSelections(fragment.selectionSet, parent: fragment.typeCondition)
        }
        // Same response key, same field: checked from each operation and fragment down
        // through every nested selection set (FieldMerging.swift). Deeper than the depth
        // limits allow is refused by them, so the walk need not go there.
        for conflict in FieldMerging.conflicts(in: document, schema: schema, fragments: fragments,
                                               maximumNesting: depthCeiling,
                                               maximumConflicts: Self.maximumErrors) {
            fail(conflict.message, conflict.locations)
        }
        var aliases = 0
        func countAliases(_ selections: [Selection]) {
            for selection in selections {
                switch selection {
                case .field(let field):
                    if field.alias != nil { aliases += 1 }
                    countAliases(field.selectionSet ?? [])
                case .inlineFragment(_, _, let inner, _): countAliases(inner)
                case .fragmentSpread: break
                }
            }
        }
        for operation in document.operations { countAliases(operation.selectionSet) }
        for fragment in document.fragments { countAliases(fragment.selectionSet) }
        if aliases > limits.maximumAliases {
            fail("The document has \(aliases) aliases; at most \(limits.maximumAliases) are allowed.", [])
        }
    }

    private mutating func checkTypeCondition(_ name: String, location: GraphQLError.Location, fragmentName: String?) {
        guard let type = schema.types[name] else {
            fail("Unknown type \"\(name)\".", [location])
            return
        }
        if case .object = type { return }
        if let fragmentName {
            fail("Fragment \"\(fragmentName)\" cannot condition on non composite type \"\(name)\".", [location])
        } else {
            fail("Fragment cannot condition on non composite type \"\(name)\".", [location])
        }
    }

    private mutating func checkFragmentCycles() {
        var state: [String: Int] = [:]  // 1: on the path, 2: done
        var reported = false
        func spreads(_ selections: [Selection]) -> [String] {
            selections.flatMap { selection -> [String] in
                switch selection {
                case .field(let field): spreads(field.selectionSet ?? [])
                case .fragmentSpread(let name, _, _): [name]
                case .inlineFragment(_, _, let inner, _): spreads(inner)
                }
            }
        }
        func visit(_ name: String, path: [String]) {
            guard let fragment = fragments[name], !reported else { return }
            if state[name] == 1 {
                let cycle = path.drop { $0 != name }.dropFirst()
                let via = cycle.isEmpty ? "" : " via " + cycle.joined(separator: ", ")
                fail("Cannot spread fragment \"\(name)\" within itself\(via).", [fragment.location])
                reported = true
                return
            }
            if state[name] == 2 { return }
            state[name] = 1
            for next in spreads(fragment.selectionSet) { visit(next, path: path + [name]) }
            state[name] = 2
        }
        for fragment in document.fragments { visit(fragment.name, path: []) }
    }

    // MARK: operations and variables

    private struct Usage {
        let name: String
        let type: TypeRef
        let hasLocationDefault: Bool
        let location: GraphQLError.Location
    }

    private mutating func validate(_ operation: OperationDefinition, usedFragments: inout Set<String>) {
        let rootName: String?
        switch operation.type {
        case .query: rootName = schema.queryType
        case .mutation: rootName = schema.mutationType
        case .subscription: rootName = nil
        }
        guard let rootName else {
            fail("Schema is not configured to execute \(operation.type.rawValue) operation.", [operation.location])
            return
        }
        checkDirectives(operation.directives, location: operation.type == .query ? "QUERY" : "MUTATION")
        var declared: [String: VariableDefinition] = [:]
        for variable in operation.variables {
            if declared[variable.name] != nil {
                fail("There can be only one variable named \"$\(variable.name)\".", [variable.location])
                continue
            }
            declared[variable.name] = variable
            guard let type = schema.types[variable.type.namedType] else {
                fail("Unknown type \"\(variable.type.namedType)\".", [variable.location])
                continue
            }
            guard type.isInput else {
                fail("Variable \"$\(variable.name)\" cannot be non-input type \"\(variable.type)\".", [variable.location])
                continue
            }
            if let defaultValue = variable.defaultValue {
                do {
                    _ = try Coercion.literal(defaultValue, variable.type, schema: schema, variables: [:])
                } catch {
                    fail(error.message, [variable.location])
                }
            }
        }
        checkSelections(operation.selectionSet, parent: rootName)
        // Depth, variables used (through fragments too), fragments reached.
        var usages: [Usage] = []
        var reached: Set<String> = []
        var deepest = 0
        var deepestIntrospection = 0
        var expanded: Set<FragmentAtDepth> = []
        var cutOff = false
        collect(operation.selectionSet, parent: rootName, depth: 1, usages: &usages, reached: &reached, deepest: &deepest,
                deepestIntrospection: &deepestIntrospection, introspectionStart: nil, path: [], expanded: &expanded, cutOff: &cutOff)
        collectDirectiveUsages(operation.directives, into: &usages)
        usedFragments.formUnion(cutOff ? reachableFragments(from: operation.selectionSet) : reached)
        let atLeast = cutOff ? "at least " : ""
        if deepest > limits.maximumDepth {
            fail("The operation nests \(atLeast)\(deepest) levels deep; at most \(limits.maximumDepth) are allowed.", [operation.location])
        }
        if deepestIntrospection > limits.maximumIntrospectionDepth {
            fail("The introspection nests \(atLeast)\(deepestIntrospection) levels deep; at most \(limits.maximumIntrospectionDepth) are allowed.",
                 [operation.location])
        }
        let operationName = operation.name.map { " by operation \"\($0)\"" } ?? ""
        for usage in usages {
            guard let variable = declared[usage.name] else {
                fail("Variable \"$\(usage.name)\" is not defined\(operationName).", [usage.location, operation.location])
                continue
            }
            guard schema.types[variable.type.namedType]?.isInput == true else { continue }
            if !Self.usageAllowed(variable: variable, usage: usage) {
                fail("Variable \"$\(usage.name)\" of type \"\(variable.type)\" used in position expecting type \"\(usage.type)\".",
                     [variable.location, usage.location])
            }
        }
        // A walk cut off at the depth ceiling has not seen every usage: no "never used" then.
        for variable in operation.variables where !cutOff && !usages.contains(where: { $0.name == variable.name }) {
            fail("Variable \"$\(variable.name)\" is never used\(operationName).", [variable.location])
        }
    }

    /// The fragments spread from `selections`, directly or through other fragments, each
    /// walked once (whatever the depth, unlike `collect`).
    private func reachableFragments(from selections: [Selection]) -> Set<String> {
        var reached: Set<String> = []
        var pending = [selections]
        while let next = pending.popLast() {
            for selection in next {
                switch selection {
                case .field(let field): pending.append(field.selectionSet ?? [])
                case .inlineFragment(_, _, let inner, _): pending.append(inner)
                case .fragmentSpread(let name, _, _):
                    if reached.insert(name).inserted, let fragment = fragments[name] { pending.append(fragment.selectionSet) }
                }
            }
        }
        return reached
    }

    private static func usageAllowed(variable: VariableDefinition, usage: Usage) -> Bool {
        let variableType = variable.type
        var locationType = usage.type
        if case .nonNull(let inner) = locationType, !variableType.isNonNull {
            let hasDefault = variable.defaultValue.map { if case .null = $0 { false } else { true } } ?? false
            guard hasDefault || usage.hasLocationDefault else { return false }
            locationType = inner
        }
        return compatible(variableType, locationType)
        func compatible(_ sub: TypeRef, _ sup: TypeRef) -> Bool {
            switch (sub, sup) {
            case (.nonNull(let a), .nonNull(let b)): compatible(a, b)
            case (.nonNull(let a), _): compatible(a, sup)
            case (_, .nonNull): false
            case (.list(let a), .list(let b)): compatible(a, b)
            case (.list, _), (_, .list): false
            case (.named(let a), .named(let b)): a == b
            }
        }
    }

    private func collectDirectiveUsages(_ directives: [Directive], into usages: inout [Usage]) {
        for directive in directives {
            guard let definition = DirectiveDefinition.named(directive.name) else { continue }
            for argument in directive.arguments {
                if let type = definition.arguments.first(where: { $0.name == argument.name })?.type {
                    Self.variableUsages(argument.value, type: type, hasDefault: false, location: argument.location, schema: schema, into: &usages)
                }
            }
        }
    }

    private static func variableUsages(_ node: ValueNode, type: TypeRef, hasDefault: Bool, location: GraphQLError.Location,
                                       schema: Schema, into usages: inout [Usage]) {
        switch node {
        case .variable(let name):
            usages.append(Usage(name: name, type: type, hasLocationDefault: hasDefault, location: location))
        case .list(let items):
            var inner = type
            if case .nonNull(let wrapped) = inner { inner = wrapped }
            if case .list(let itemType) = inner { inner = itemType }
            for item in items { variableUsages(item, type: inner, hasDefault: false, location: location, schema: schema, into: &usages) }
        case .object(let fields):
            let definitions: [InputValue]
            if case .inputObject(let input)? = schema.types[type.namedType] { definitions = input.fields } else { definitions = [] }
            for field in fields {
                let definition = definitions.first { $0.name == field.name }
                variableUsages(field.value, type: definition?.type ?? .named("JSON"), hasDefault: definition?.defaultValue != nil,
                               location: location, schema: schema, into: &usages)
            }
        default:
            break
        }
    }

    /// Past this depth every operation breaks a depth limit: an introspection field starts at
    /// most `maximumDepth` deep and nests at most `maximumIntrospectionDepth` below.
    private var depthCeiling: Int { limits.maximumDepth + limits.maximumIntrospectionDepth }

    /// A fragment spread where the walk below already went: same fragment, same depth, same
    /// introspection start — going again finds nothing new.
    private struct FragmentAtDepth: Hashable {
        let name: String
        let depth: Int
        let introspectionStart: Int?
    }

    /// Walks an operation with its fragments expanded: depth, variable usages, fragments reached.
    /// A fragment is walked once per depth: a document whose fragments spread the next one
    /// several times each would otherwise cost exponential time (`expanded`). The walk stops
    /// at `depthCeiling` (`cutOff`): deeper breaks a depth limit whatever lies below, and
    /// fragments spread inside fragments nest with no syntax limit, so an unbounded recursion
    /// could exhaust the stack on a 64 KiB document.
    private func collect(_ selections: [Selection], parent: String, depth: Int, usages: inout [Usage], reached: inout Set<String>,
                         deepest: inout Int, deepestIntrospection: inout Int, introspectionStart: Int?, path: [String],
                         expanded: inout Set<FragmentAtDepth>, cutOff: inout Bool) {
        for selection in selections {
            switch selection {
            case .field(let field):
                var start = introspectionStart
                if start == nil, field.name == "__schema" || field.name == "__type" { start = depth }
                if let start {
                    deepest = max(deepest, start)
                    deepestIntrospection = max(deepestIntrospection, depth - start + 1)
                } else {
                    deepest = max(deepest, depth)
                }
                collectDirectiveUsages(field.directives, into: &usages)
                let definition = schema.field(field.name, on: parent)
                for argument in field.arguments {
                    guard let argumentDefinition = definition?.arguments.first(where: { $0.name == argument.name }) else {
                        Self.variableUsages(argument.value, type: .named("JSON"), hasDefault: false, location: argument.location, schema: schema, into: &usages)
                        continue
                    }
                    Self.variableUsages(argument.value, type: argumentDefinition.type, hasDefault: argumentDefinition.defaultValue != nil,
                                        location: argument.location, schema: schema, into: &usages)
                }
                if field.selectionSet != nil, depth >= depthCeiling {
                    cutOff = true
                } else if let inner = field.selectionSet {
                    collect(inner, parent: definition?.type.namedType ?? "", depth: depth + 1, usages: &usages, reached: &reached,
                            deepest: &deepest, deepestIntrospection: &deepestIntrospection, introspectionStart: start, path: path,
                            expanded: &expanded, cutOff: &cutOff)
                }
            case .inlineFragment(let condition, let directives, let inner, _):
                collectDirectiveUsages(directives, into: &usages)
                collect(inner, parent: condition ?? parent, depth: depth, usages: &usages, reached: &reached, deepest: &deepest,
                        deepestIntrospection: &deepestIntrospection, introspectionStart: introspectionStart, path: path,
                        expanded: &expanded, cutOff: &cutOff)
            case .fragmentSpread(let name, let directives, _):
                collectDirectiveUsages(directives, into: &usages)
                reached.insert(name)
                guard !path.contains(name), let fragment = fragments[name],
                      expanded.insert(FragmentAtDepth(name: name, depth: depth, introspectionStart: introspectionStart)).inserted
                else { continue }
                collect(fragment.selectionSet, parent: fragment.typeCondition, depth: depth, usages: &usages, reached: &reached,
                        deepest: &deepest, deepestIntrospection: &deepestIntrospection, introspectionStart: introspectionStart,
                        path: path + [name], expanded: &expanded, cutOff: &cutOff)
            }
        }
    }

    // MARK: selections

    private mutating func checkSelections(_ selections: [Selection], parent: String) {
        guard schema.object(parent) != nil else { return }
        for selection in selections {
            switch selection {
            case .field(let field):
                checkDirectives(field.directives, location: "FIELD")
                guard let definition = schema.field(field.name, on: parent) else {
                    fail("Cannot query field \"\(field.name)\" on type \"\(parent)\".", [field.location])
                    continue
                }
                checkArguments(field.arguments, definitions: definition.arguments,
                               owner: "field \"\(parent).\(field.name)\"", location: field.location)
                let typeName = definition.type.namedType
                let isLeaf = schema.types[typeName]?.isLeaf ?? true
                if isLeaf, let inner = field.selectionSet {
                    _ = inner
                    fail("Field \"\(field.name)\" must not have a selection since type \"\(definition.type)\" has no subfields.", [field.location])
                } else if !isLeaf, field.selectionSet == nil {
                    fail("Field \"\(field.name)\" of type \"\(definition.type)\" must have a selection of subfields. Did you mean \"\(field.name) { ... }\"?", [field.location])
                } else if let inner = field.selectionSet {
                    checkSelections(inner, parent: typeName)
                }
            case .inlineFragment(let condition, let directives, let inner, let location):
                checkDirectives(directives, location: "INLINE_FRAGMENT")
                if let condition {
                    checkTypeCondition(condition, location: location, fragmentName: nil)
                    if schema.object(condition) != nil, condition != parent {
                        fail("Fragment cannot be spread here as objects of type \"\(parent)\" can never be of type \"\(condition)\".", [location])
                        continue
                    }
                }
                checkSelections(inner, parent: condition ?? parent)
            case .fragmentSpread(let name, let directives, let location):
                checkDirectives(directives, location: "FRAGMENT_SPREAD")
                guard let fragment = fragments[name] else {
                    fail("Unknown fragment \"\(name)\".", [location])
                    continue
                }
                if schema.object(fragment.typeCondition) != nil, fragment.typeCondition != parent {
                    fail("Fragment \"\(name)\" cannot be spread here as objects of type \"\(parent)\" can never be of type \"\(fragment.typeCondition)\".", [location])
                }
            }
        }
    }

    private mutating func checkArguments(_ arguments: [Argument], definitions: [InputValue], owner: String,
                                         location: GraphQLError.Location) {
        var names: Set<String> = []
        for argument in arguments {
            if !names.insert(argument.name).inserted {
                fail("There can be only one argument named \"\(argument.name)\".", [argument.location])
                continue
            }
            guard let definition = definitions.first(where: { $0.name == argument.name }) else {
                fail("Unknown argument \"\(argument.name)\" on \(owner).", [argument.location])
                continue
            }
            checkLiteral(argument.value, type: definition.type, location: argument.location)
        }
        for definition in definitions where definition.type.isNonNull && definition.defaultValue == nil
            && !arguments.contains(where: { $0.name == definition.name }) {
            fail("\(owner.prefix(1).uppercased() + owner.dropFirst()) argument \"\(definition.name)\" of type \"\(definition.type)\" is required, but it was not provided.", [location])
        }
    }

    /// Values of correct type: the literal parts of a value (variables are checked by usage).
    private mutating func checkLiteral(_ node: ValueNode, type: TypeRef, location: GraphQLError.Location) {
        if case .object(let fields) = node {
            var names: Set<String> = []
            for field in fields where !names.insert(field.name).inserted {
                fail("There can be only one input field named \"\(field.name)\".", [location])
                return
            }
        }
        do {
            // Variables stand for any value of their (separately checked) type: a placeholder
            // per variable makes the rest of the literal checkable.
            _ = try Coercion.literal(Self.withoutVariables(node, type: type, schema: schema), type, schema: schema, variables: [:])
        } catch {
            fail(error.message, [location])
        }
    }

    /// The literal with each variable replaced by a placeholder valid where it stands, so only
    /// the literal parts are judged here.
    private static func withoutVariables(_ node: ValueNode, type: TypeRef, schema: Schema) -> ValueNode {
        switch node {
        case .variable:
            return placeholder(type, schema: schema)
        case .list(let items):
            var inner = type
            if case .nonNull(let wrapped) = inner { inner = wrapped }
            if case .list(let itemType) = inner { inner = itemType }
            return .list(items.map { withoutVariables($0, type: inner, schema: schema) })
        case .object(let fields):
            guard case .inputObject(let input)? = schema.types[type.namedType] else { return node }
            return .object(fields.map { field in
                let fieldType = input.fields.first { $0.name == field.name }?.type ?? .named("JSON")
                return (field.name, withoutVariables(field.value, type: fieldType, schema: schema))
            })
        default:
            return node
        }
    }

    private static func placeholder(_ type: TypeRef, schema: Schema) -> ValueNode {
        switch type {
        case .nonNull(let inner): return placeholder(inner, schema: schema)
        case .list: return .list([])
        case .named(let name):
            switch schema.types[name] {
            case .scalar(let scalar)?:
                switch scalar.kind {
                case .string, .id: return .string("")
                case .int, .float: return .int("0")
                case .boolean: return .bool(true)
                case .json: return .null
                }
            case .enumType(let enumType)?: return .enumValue(enumType.values.first ?? "")
            case .inputObject(let input)?:
                return .object(input.fields.filter { $0.type.isNonNull }.map { ($0.name, placeholder($0.type, schema: schema)) })
            default: return .null
            }
        }
    }

    private mutating func checkDirectives(_ directives: [Directive], location: String) {
        var names: Set<String> = []
        for directive in directives {
            guard let definition = DirectiveDefinition.named(directive.name) else {
                fail("Unknown directive \"@\(directive.name)\".", [directive.location])
                continue
            }
            if !definition.locations.contains(location) {
                fail("Directive \"@\(directive.name)\" may not be used on \(location).", [directive.location])
                continue
            }
            if !names.insert(directive.name).inserted {
                fail("The directive \"@\(directive.name)\" can only be used once at this location.", [directive.location])
            }
            checkArguments(directive.arguments, definitions: definition.arguments, owner: "directive \"@\(directive.name)\"",
                           location: directive.location)
        }
    }
}
