/// Input coercion (spec 3.5, 5.6.1, 6.1.2): literals and variable values against input types.
/// A problem is a message; the caller places it (a validation error, or a request error).
enum Coercion {
    struct Problem: Error { let message: String }

    /// A literal (or variable-bearing value) coerced to `type`; nil when it is a variable that
    /// was not provided (the argument is then absent).
    static func literal(_ node: ValueNode, _ type: TypeRef, schema: Schema, variables: [String: GraphQLValue]) throws(Problem) -> GraphQLValue? {
        if case .variable(let name) = node {
            guard let value = variables[name] else { return nil }
            if type.isNonNull, value.isNull { throw Problem(message: "Variable \"$\(name)\" of non-null type must not be null.") }
            return value
        }
        switch type {
        case .nonNull(let inner):
            if case .null = node { throw Problem(message: "Expected value of type \"\(type)\", found null.") }
            guard let value = try literal(node, inner, schema: schema, variables: variables) else {
                throw Problem(message: "Expected value of type \"\(type)\".")
            }
            return value
        case .list(let inner):
            if case .null = node { return .null }
            if case .list(let items) = node {
                var out: [GraphQLValue] = []
                for item in items { out.append(try literal(item, inner, schema: schema, variables: variables) ?? .null) }
                return .list(out)
            }
            return .list([try literal(node, inner, schema: schema, variables: variables) ?? .null])
        case .named(let name):
            if case .null = node { return .null }
            switch schema.types[name] {
            case .scalar(let scalar)?:
                if scalar.kind == .json { return jsonLiteral(node, variables: variables) }
                return try scalarLiteral(node, scalar)
            case .enumType(let enumType)?:
                guard case .enumValue(let value) = node, enumType.values.contains(value) else {
                    throw Problem(message: "Value \(print(node)) does not exist in \"\(name)\" enum.")
                }
                return .string(value)
            case .inputObject(let input)?:
                guard case .object(let fields) = node else {
                    throw Problem(message: "Expected value of type \"\(name)\", found \(print(node)).")
                }
                var out: [(String, GraphQLValue)] = []
                for field in fields where !input.fields.contains(where: { $0.name == field.name }) {
                    throw Problem(message: "Field \"\(field.name)\" is not defined by type \"\(name)\".")
                }
                for definition in input.fields {
                    let given = fields.first { $0.name == definition.name }
                    if let given, let value = try literal(given.value, definition.type, schema: schema, variables: variables) {
                        out.append((definition.name, value))
                    } else if let defaultValue = definition.defaultValue {
                        out.append((definition.name, defaultValue))
                    } else if definition.type.isNonNull {
                        throw Problem(message: "Field \"\(name).\(definition.name)\" of required type \"\(definition.type)\" was not provided.")
                    }
                }
                return .object(out)
            default:
                throw Problem(message: "Unknown type \"\(name)\".")
            }
        }
    }

    private static func scalarLiteral(_ node: ValueNode, _ scalar: ScalarType) throws(Problem) -> GraphQLValue {
        let wrong = Problem(message: "\(scalar.name) cannot represent a non \(scalar.kind == .id ? "string or int" : scalar.name.lowercased()) value: \(print(node))")
        switch (scalar.kind, node) {
        case (.string, .string(let text)): return .string(text)
        case (.boolean, .bool(let value)): return .bool(value)
        case (.int, .int(let text)):
            guard let value = Int32(text) else { throw Problem(message: "Int cannot represent non 32-bit signed integer value: \(text)") }
            return .int(Int(value))
        case (.float, .int(let text)), (.float, .float(let text)):
            guard let value = Double(text), value.isFinite else { throw wrong }
            return .float(value)
        case (.id, .string(let text)), (.id, .int(let text)): return .string(text)
        default: throw wrong
        }
    }

    private static func jsonLiteral(_ node: ValueNode, variables: [String: GraphQLValue]) -> GraphQLValue {
        switch node {
        case .variable(let name): return variables[name] ?? .null
        case .int(let text): return Int(text).map { .int($0) } ?? .float(Double(text) ?? 0)
        case .float(let text): return .float(Double(text) ?? 0)
        case .string(let text), .enumValue(let text): return .string(text)
        case .bool(let value): return .bool(value)
        case .null: return .null
        case .list(let items): return .list(items.map { jsonLiteral($0, variables: variables) })
        case .object(let fields): return .object(fields.map { ($0.name, jsonLiteral($0.value, variables: variables)) })
        }
    }

    /// A variable's JSON value coerced to its declared type.
    static func input(_ value: GraphQLValue, _ type: TypeRef, schema: Schema) throws(Problem) -> GraphQLValue {
        switch type {
        case .nonNull(let inner):
            if value.isNull { throw Problem(message: "Expected non-nullable type \"\(type)\" not to be null.") }
            return try input(value, inner, schema: schema)
        case .list(let inner):
            if value.isNull { return .null }
            if case .list(let items) = value {
                var out: [GraphQLValue] = []
                for item in items { out.append(try input(item, inner, schema: schema)) }
                return .list(out)
            }
            return .list([try input(value, inner, schema: schema)])
        case .named(let name):
            if value.isNull { return .null }
            switch schema.types[name] {
            case .scalar(let scalar)?:
                switch (scalar.kind, value) {
                case (.json, _): return value
                case (.string, .string), (.boolean, .bool): return value
                case (.int, .int(let number)) where Int32(exactly: number) != nil: return value
                case (.int, .float(let number)) where number == number.rounded() && Int32(exactly: number) != nil: return .int(Int(number))
                case (.float, .int(let number)): return .float(Double(number))
                case (.float, .float): return value
                case (.id, .string): return value
                case (.id, .int(let number)): return .string(String(number))
                default: throw Problem(message: "\(scalar.name) cannot represent value: \(value.json)")
                }
            case .enumType(let enumType)?:
                guard case .string(let text) = value, enumType.values.contains(text) else {
                    throw Problem(message: "Value \(value.json) does not exist in \"\(name)\" enum.")
                }
                return value
            case .inputObject(let inputType)?:
                guard case .object(let pairs) = value else { throw Problem(message: "Expected type \"\(name)\" to be an object.") }
                for (key, _) in pairs where !inputType.fields.contains(where: { $0.name == key }) {
                    throw Problem(message: "Field \"\(key)\" is not defined by type \"\(name)\".")
                }
                var out: [(String, GraphQLValue)] = []
                for definition in inputType.fields {
                    if let given = value[definition.name] {
                        out.append((definition.name, try input(given, definition.type, schema: schema)))
                    } else if let defaultValue = definition.defaultValue {
                        out.append((definition.name, defaultValue))
                    } else if definition.type.isNonNull {
                        throw Problem(message: "Field \"\(definition.name)\" of required type \"\(definition.type)\" was not provided.")
                    }
                }
                return .object(out)
            default:
                throw Problem(message: "Unknown type \"\(name)\".")
            }
        }
    }

    /// A literal as GraphQL text (messages, `defaultValue` in introspection).
    static func print(_ node: ValueNode) -> String {
        switch node {
        case .variable(let name): "$" + name
        case .int(let text), .float(let text), .enumValue(let text): text
        case .string(let text): GraphQLValue.string(text).json
        case .bool(let value): value ? "true" : "false"
        case .null: "null"
        case .list(let items): "[" + items.map(print).joined(separator: ", ") + "]"
        case .object(let fields): "{" + fields.map { "\($0.name): \(print($0.value))" }.joined(separator: ", ") + "}"
        }
    }

    /// A coerced value as a GraphQL literal of `type` (enum values unquoted).
    static func printValue(_ value: GraphQLValue, _ type: TypeRef, schema: Schema) -> String {
        switch (value, type) {
        case (_, .nonNull(let inner)): return printValue(value, inner, schema: schema)
        case (.list(let items), .list(let inner)): return "[" + items.map { printValue($0, inner, schema: schema) }.joined(separator: ", ") + "]"
        case (.string(let text), .named(let name)):
            if case .enumType? = schema.types[name] { return text }
            return value.json
        case (.object(let pairs), .named(let name)):
            var fieldTypes: [String: TypeRef] = [:]
            if case .inputObject(let input)? = schema.types[name] { for field in input.fields { fieldTypes[field.name] = field.type } }
            return "{" + pairs.map { "\($0.0): \(printValue($0.1, fieldTypes[$0.0] ?? .named("JSON"), schema: schema))" }.joined(separator: ", ") + "}"
        default: return value.json
        }
    }
}
