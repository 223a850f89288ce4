/// Executes a validated document (spec section 6): picks the operation, coerces variables,
/// runs root fields (a mutation's one after another), completes values against their types
/// and turns a resolver's thrown `GraphQLError` into an `errors[]` entry with its path, the
/// field becoming null (up to the nearest nullable parent, as the spec says).
public struct Request: Sendable {
    public var query: String
    public var variables: [(String, GraphQLValue)]
    public var operationName: String?

    public init(query: String, variables: [(String, GraphQLValue)] = [], operationName: String? = nil) {
        self.query = query
        self.variables = variables
        self.operationName = operationName
    }
}

/// `{data, errors}`: `data` absent when the request failed before execution.
public struct Response: Error, Sendable {
    public var data: GraphQLValue?
    public var errors: [GraphQLError]

    public init(data: GraphQLValue?, errors: [GraphQLError]) {
        self.data = data
        self.errors = errors
    }

    public var value: GraphQLValue {
        var pairs: [(String, GraphQLValue)] = []
        if !errors.isEmpty { pairs.append(("errors", .list(errors.map(\.value)))) }
        if let data { pairs.append(("data", data)) }
        return .object(pairs)
    }
}

/// A prepared request: parsed, validated, operation chosen, variables coerced.
public struct PreparedOperation: Sendable {
    public let operation: OperationDefinition
    let document: Document
    let variables: [String: GraphQLValue]
    let limits: Limits

    /// The root fields that will run (after `@skip`/`@include`), for limits such as "one
    /// sign-in per request".
    public func rootFieldNames(schema: Schema) -> [String] {
        let executor = Executor(schema: schema, fragments: Dictionary(document.fragments.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a }),
                                variables: variables, context: (), budget: IntrospectionBudget(maximum: .max))
        let root = operation.type == .mutation ? schema.mutationType ?? "" : schema.queryType
        return executor.collectFields(operation.selectionSet, objectType: root).map { $0.fields[0].name }
    }
}

public enum Execution {
    /// Parse, validate, choose the operation and coerce its variables; a failure is the
    /// response to send (no `data`).
    public static func prepare(_ request: Request, schema: Schema, limits: Limits = Limits()) -> Result<PreparedOperation, Response> {
        let document: Document
        do {
            document = try Parser.parse(request.query)
        } catch {
            return .failure(Response(data: nil, errors: [error]))
        }
        let problems = Validator.validate(document, schema: schema, limits: limits)
        guard problems.isEmpty else { return .failure(Response(data: nil, errors: problems)) }
        let operation: OperationDefinition
        if let name = request.operationName {
            guard let named = document.operations.first(where: { $0.name == name }) else {
                return .failure(Response(data: nil, errors: [GraphQLError("Unknown operation named \"\(name)\".", code: GraphQLError.Code.operationNotFound)]))
            }
            operation = named
        } else {
            guard document.operations.count == 1 else {
                return .failure(Response(data: nil, errors: [GraphQLError(
                    document.operations.isEmpty ? "Must provide an operation." : "Must provide operation name if query contains multiple operations.",
                    code: GraphQLError.Code.operationNotFound)]))
            }
            operation = document.operations[0]
        }
        var given: [String: GraphQLValue] = [:]
        for (key, value) in request.variables { given[key] = value }
        var coerced: [String: GraphQLValue] = [:]
        var errors: [GraphQLError] = []
        for definition in operation.variables {
            if let value = given[definition.name] {
                do {
                    coerced[definition.name] = try Coercion.input(value, definition.type, schema: schema)
                } catch {
                    errors.append(GraphQLError("Variable \"$\(definition.name)\" got invalid value \(value.json); \(error.message)",
                                               code: GraphQLError.Code.badUserInput, locations: [definition.location]))
                }
            } else if let defaultValue = definition.defaultValue {
                coerced[definition.name] = try? Coercion.literal(defaultValue, definition.type, schema: schema, variables: [:])
            } else if definition.type.isNonNull {
                errors.append(GraphQLError("Variable \"$\(definition.name)\" of required type \"\(definition.type)\" was not provided.",
                                           code: GraphQLError.Code.badUserInput, locations: [definition.location]))
            }
        }
        guard errors.isEmpty else { return .failure(Response(data: nil, errors: errors)) }
        return .success(PreparedOperation(operation: operation, document: document, variables: coerced, limits: limits))
    }

    public static func execute(_ prepared: PreparedOperation, schema: Schema, context: any Sendable) async -> Response {
        let fragments = Dictionary(prepared.document.fragments.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
        let budget = IntrospectionBudget(maximum: prepared.limits.maximumIntrospectionFields)
        let executor = Executor(schema: schema, fragments: fragments, variables: prepared.variables, context: context, budget: budget)
        let root = prepared.operation.type == .mutation ? schema.mutationType ?? "" : schema.queryType
        let data = await executor.executeSelections(prepared.operation.selectionSet, objectType: root, parent: .null, path: [])
        if budget.exceeded { return Response(data: .null, errors: [budget.error]) }
        return Response(data: data ?? .null, errors: executor.errors.list)
    }
}

/// Errors gathered during one execution (fields run one after another, so no lock is needed;
/// the box only lets the executor stay a value type).
final class ErrorList: @unchecked Sendable {
    var list: [GraphQLError] = []
}

/// A field's merged occurrences under one response key.
struct CollectedField {
    let key: String
    var fields: [FieldNode]
}

/// A field's value was null where its type forbids it: the null moves to the parent.
struct NullPropagation: Error {}

struct Executor: Sendable {
    let schema: Schema
    let fragments: [String: FragmentDefinition]
    let variables: [String: GraphQLValue]
    let context: any Sendable
    let budget: IntrospectionBudget
    let errors = ErrorList()

    func included(_ directives: [Directive]) -> Bool {
        for directive in directives where directive.name == "skip" || directive.name == "include" {
            guard let argument = directive.arguments.first(where: { $0.name == "if" }) else { continue }
            let value = (try? Coercion.literal(argument.value, .nonNull(.named("Boolean")), schema: schema, variables: variables)) ?? nil
            let flag = value == .bool(true)
            if directive.name == "skip" && flag { return false }
            if directive.name == "include" && !flag { return false }
        }
        return true
    }

    func collectFields(_ selections: [Selection], objectType: String) -> [CollectedField] {
        var collected: [CollectedField] = []
        var visited: Set<String> = []
        func walk(_ selections: [Selection]) {
            for selection in selections {
                switch selection {
                case .field(let field):
                    guard included(field.directives) else { continue }
                    if let index = collected.firstIndex(where: { $0.key == field.responseKey }) {
                        collected[index].fields.append(field)
                    } else {
                        collected.append(CollectedField(key: field.responseKey, fields: [field]))
                    }
                case .inlineFragment(let condition, let directives, let inner, _):
                    guard included(directives), condition == nil || condition == objectType else { continue }
                    walk(inner)
                case .fragmentSpread(let name, let directives, _):
                    guard included(directives), visited.insert(name).inserted, let fragment = fragments[name],
                          fragment.typeCondition == objectType else { continue }
                    walk(fragment.selectionSet)
                }
            }
        }
        walk(selections)
        return collected
    }

    /// An object's selected fields; nil when a non-null field came back null (the object
    /// itself is then null).
    func executeSelections(_ selections: [Selection], objectType: String, parent: GraphQLValue, path: [GraphQLValue]) async -> GraphQLValue? {
        var pairs: [(String, GraphQLValue)] = []
        for collected in collectFields(selections, objectType: objectType) {
            let field = collected.fields[0]
            // Past the budget nothing more is resolved: the object is dropped and its parents
            // unwind (the answer is then the budget's error alone).
            guard budget.take(field.name, on: objectType) else { return nil }
            guard let definition = schema.field(field.name, on: objectType) else { continue }
            let fieldPath = path + [.string(collected.key)]
            do {
                let value = try await resolveField(collected, definition: definition, objectType: objectType, parent: parent, path: fieldPath)
                pairs.append((collected.key, value))
            } catch {
                return nil
            }
        }
        return .object(pairs)
    }

    private func resolveField(_ collected: CollectedField, definition: Field, objectType: String, parent: GraphQLValue,
                              path: [GraphQLValue]) async throws(NullPropagation) -> GraphQLValue {
        let field = collected.fields[0]
        var raw: GraphQLValue
        if field.name == "__typename" {
            raw = .string(objectType)
        } else {
            do {
                var arguments: [String: GraphQLValue] = [:]
                for argumentDefinition in definition.arguments {
                    if let given = field.arguments.first(where: { $0.name == argumentDefinition.name }),
                       let value = try Coercion.literal(given.value, argumentDefinition.type, schema: schema, variables: variables) {
                        arguments[argumentDefinition.name] = value
                    } else if let defaultValue = argumentDefinition.defaultValue {
                        arguments[argumentDefinition.name] = defaultValue
                    } else if argumentDefinition.type.isNonNull {
                        throw GraphQLError("Argument \"\(argumentDefinition.name)\" of required type \"\(argumentDefinition.type)\" was not provided.",
                                           code: GraphQLError.Code.badUserInput)
                    }
                }
                if let resolve = definition.resolve {
                    raw = try await resolve(ResolveInfo(parent: parent, arguments: arguments, context: context, fieldName: field.name, schema: schema))
                } else {
                    raw = parent[field.name] ?? .null
                }
            } catch let problem as Coercion.Problem {
                return try fieldError(GraphQLError(problem.message, code: GraphQLError.Code.badUserInput), field: field, type: definition.type, path: path)
            } catch let error as GraphQLError {
                return try fieldError(error, field: field, type: definition.type, path: path)
            } catch {
                return try fieldError(GraphQLError("Internal error.", code: GraphQLError.Code.internalError), field: field,
                                      type: definition.type, path: path)
            }
        }
        return try await complete(raw, type: definition.type, fields: collected.fields, path: path)
    }

    private func fieldError(_ error: GraphQLError, field: FieldNode, type: TypeRef, path: [GraphQLValue]) throws(NullPropagation) -> GraphQLValue {
        var located = error
        if located.locations.isEmpty { located.locations = [field.location] }
        located.path = path
        errors.list.append(located)
        if type.isNonNull { throw NullPropagation() }
        return .null
    }

    /// A nullable position swallows a null from below (it becomes null); a non-null one
    /// passes it up.
    private func complete(_ value: GraphQLValue, type: TypeRef, fields: [FieldNode], path: [GraphQLValue]) async throws(NullPropagation) -> GraphQLValue {
        guard case .nonNull(let inner) = type else {
            do {
                return try await completeInner(value, type: type, fields: fields, path: path)
            } catch {
                return .null
            }
        }
        if value.isNull {
            errors.list.append(GraphQLError("Cannot return null for non-nullable field.", code: GraphQLError.Code.internalError,
                                            locations: [fields[0].location], path: path))
            throw NullPropagation()
        }
        return try await completeInner(value, type: inner, fields: fields, path: path)
    }

    private func completeInner(_ value: GraphQLValue, type: TypeRef, fields: [FieldNode], path: [GraphQLValue]) async throws(NullPropagation) -> GraphQLValue {
        if value.isNull { return .null }
        switch type {
        case .nonNull:
            return try await complete(value, type: type, fields: fields, path: path)
        case .list(let inner):
            guard case .list(let items) = value else { return .null }
            var out: [GraphQLValue] = []
            for (index, item) in items.enumerated() {
                out.append(try await complete(item, type: inner, fields: fields, path: path + [.int(index)]))
            }
            return .list(out)
        case .named(let name):
            switch schema.types[name] {
            case .object?:
                let selections = fields.flatMap { $0.selectionSet ?? [] }
                guard let object = await executeSelections(selections, objectType: name, parent: value, path: path) else {
                    throw NullPropagation()
                }
                return object
            case .scalar(let scalar)?:
                return Self.serialize(value, scalar.kind)
            default:
                return value
            }
        }
    }

    static func serialize(_ value: GraphQLValue, _ kind: ScalarKind) -> GraphQLValue {
        switch (kind, value) {
        case (.id, .int(let number)): .string(String(number))
        case (.float, .int(let number)): .float(Double(number))
        default: value
        }
    }
}
