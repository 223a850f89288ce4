/// The syntax tree of an executable GraphQL document (the spec's "Executable Definitions"):
/// operations and fragments. Type-system definitions are not accepted in a request.
public struct Document: Sendable {
    public var operations: [OperationDefinition]
    public var fragments: [FragmentDefinition]
}

public enum OperationType: String, Sendable {
    case query, mutation, subscription
}

public struct OperationDefinition: Sendable {
    public var type: OperationType
    public var name: String?
    public var variables: [VariableDefinition]
    public var directives: [Directive]
    public var selectionSet: [Selection]
    public var location: GraphQLError.Location
}

public struct VariableDefinition: Sendable {
    public var name: String
    public var type: TypeRef
    public var defaultValue: ValueNode?
    public var location: GraphQLError.Location
}

public struct FragmentDefinition: Sendable {
    public var name: String
    public var typeCondition: String
    public var directives: [Directive]
    public var selectionSet: [Selection]
    public var location: GraphQLError.Location
}

public indirect enum Selection: Sendable {
    case field(FieldNode)
    case fragmentSpread(name: String, directives: [Directive], location: GraphQLError.Location)
    case inlineFragment(typeCondition: String?, directives: [Directive], selectionSet: [Selection], location: GraphQLError.Location)
}

public struct FieldNode: Sendable {
    public var alias: String?
    public var name: String
    public var arguments: [Argument]
    public var directives: [Directive]
    public var selectionSet: [Selection]?
    public var location: GraphQLError.Location
    /// The key of this field in the response.
    public var responseKey: String { alias ?? name }
}

public struct Argument: Sendable {
    public var name: String
    public var value: ValueNode
    public var location: GraphQLError.Location
}

public struct Directive: Sendable {
    public var name: String
    public var arguments: [Argument]
    public var location: GraphQLError.Location
}

/// A value as written in the document (variables still unresolved).
public indirect enum ValueNode: Sendable {
    case variable(String)
    case int(String)
    case float(String)
    case string(String)
    case bool(Bool)
    case null
    case enumValue(String)
    case list([ValueNode])
    case object([(name: String, value: ValueNode)])
}

/// A type as written: `Name`, `[T]`, `T!`.
public indirect enum TypeRef: Sendable, Equatable, CustomStringConvertible {
    case named(String)
    case list(TypeRef)
    case nonNull(TypeRef)

    public var description: String {
        switch self {
        case .named(let name): name
        case .list(let inner): "[\(inner)]"
        case .nonNull(let inner): "\(inner)!"
        }
    }

    /// The named type under any list and non-null wrappers.
    public var namedType: String {
        switch self {
        case .named(let name): name
        case .list(let inner), .nonNull(let inner): inner.namedType
        }
    }

    public var isNonNull: Bool {
        if case .nonNull = self { return true }
        return false
    }

    /// Parses the text `description` writes (`[String!]!`); nil when it is not one.
    public static func parse(_ text: Substring) -> TypeRef? {
        if text.hasSuffix("!") {
            guard let inner = parse(text.dropLast()), !inner.isNonNull else { return nil }
            return .nonNull(inner)
        }
        if text.hasPrefix("[") && text.hasSuffix("]") {
            return parse(text.dropFirst().dropLast()).map { .list($0) }
        }
        // A Name (spec 2.1.9) is ASCII: bytes, not Unicode letters (introspection parses a
        // type reference per field it answers; Character properties were a fifth of its time).
        guard !text.isEmpty, text.utf8.allSatisfy({ byte in
            (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x30 && byte <= 0x39) || byte == 0x5F
        }) else { return nil }
        return .named(String(text))
    }
}
