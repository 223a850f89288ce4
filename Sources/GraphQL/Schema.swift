/// What a resolver gets: its parent's value, its coerced arguments, and the caller's context
/// (the service's own: request, app, bearer), opaque to this module.
public struct ResolveInfo: Sendable {
    public let parent: GraphQLValue
    public let arguments: [String: GraphQLValue]
    public let context: any Sendable
    public let fieldName: String
    public let schema: Schema

    public func argument(_ name: String) -> GraphQLValue { arguments[name] ?? .null }
}

public typealias Resolver = @Sendable (ResolveInfo) async throws -> GraphQLValue

public struct InputValue: Sendable {
    public var name: String
    public var type: TypeRef
    public var description: String?
    public var defaultValue: GraphQLValue?

    public init(_ name: String, _ type: TypeRef, description: String? = nil, defaultValue: GraphQLValue? = nil) {
        self.name = name
        self.type = type
        self.description = description
        self.defaultValue = defaultValue
    }
}

public struct Field: Sendable {
    public var name: String
    public var type: TypeRef
    public var arguments: [InputValue]
    public var description: String?
    public var deprecationReason: String?
    /// Nil: the parent object's member of the same name.
    public var resolve: Resolver?

    public init(_ name: String, _ type: TypeRef, arguments: [InputValue] = [], description: String? = nil,
                deprecationReason: String? = nil, resolve: Resolver? = nil) {
        self.name = name
        self.type = type
        self.arguments = arguments
        self.description = description
        self.deprecationReason = deprecationReason
        self.resolve = resolve
    }
}

public struct ObjectType: Sendable {
    public var name: String
    public var description: String?
    public var fields: [Field]

    public init(_ name: String, description: String? = nil, fields: [Field]) {
        self.name = name
        self.description = description
        self.fields = fields
    }

    public func field(_ name: String) -> Field? { fields.first { $0.name == name } }
}

public struct InputObjectType: Sendable {
    public var name: String
    public var description: String?
    public var fields: [InputValue]

    public init(_ name: String, description: String? = nil, fields: [InputValue]) {
        self.name = name
        self.description = description
        self.fields = fields
    }
}

public struct EnumType: Sendable {
    public var name: String
    public var description: String?
    public var values: [String]

    public init(_ name: String, description: String? = nil, values: [String]) {
        self.name = name
        self.description = description
        self.values = values
    }
}

public enum ScalarKind: Sendable {
    case string, int, float, boolean, id
    /// Any JSON value, in and out (`scalar JSON`).
    case json
}

public struct ScalarType: Sendable {
    public var name: String
    public var description: String?
    public var kind: ScalarKind
    public var specifiedByURL: String?

    public init(_ name: String, kind: ScalarKind, description: String? = nil, specifiedByURL: String? = nil) {
        self.name = name
        self.kind = kind
        self.description = description
        self.specifiedByURL = specifiedByURL
    }
}

public enum NamedType: Sendable {
    case scalar(ScalarType)
    case object(ObjectType)
    case inputObject(InputObjectType)
    case enumType(EnumType)

    public var name: String {
        switch self {
        case .scalar(let type): type.name
        case .object(let type): type.name
        case .inputObject(let type): type.name
        case .enumType(let type): type.name
        }
    }

    public var description: String? {
        switch self {
        case .scalar(let type): type.description
        case .object(let type): type.description
        case .inputObject(let type): type.description
        case .enumType(let type): type.description
        }
    }

    var isInput: Bool {
        switch self {
        case .scalar, .inputObject, .enumType: true
        case .object: false
        }
    }

    var isLeaf: Bool {
        switch self {
        case .scalar, .enumType: true
        default: false
        }
    }
}

/// A schema: named types, the query and mutation roots. The introspection types are added
/// here, so every schema answers `__schema`, `__type` and `__typename`.
public struct Schema: Sendable {
    public let types: [String: NamedType]
    /// The types in declaration order (the SDL printer and `__schema.types` keep it).
    public let typeNames: [String]
    public let queryType: String
    public let mutationType: String?

    public static let builtInScalars: [ScalarType] = [
        ScalarType("String", kind: .string, description: "The `String` scalar type represents textual data, represented as UTF-8 character sequences. The String type is most often used by GraphQL to represent free-form human-readable text."),
        ScalarType("Int", kind: .int, description: "The `Int` scalar type represents non-fractional signed whole numeric values. Int can represent values between -(2^31) and 2^31 - 1."),
        ScalarType("Float", kind: .float, description: "The `Float` scalar type represents signed double-precision fractional values as specified by [IEEE 754](https://en.wikipedia.org/wiki/IEEE_floating_point)."),
        ScalarType("Boolean", kind: .boolean, description: "The `Boolean` scalar type represents `true` or `false`."),
        ScalarType("ID", kind: .id, description: "The `ID` scalar type represents a unique identifier, often used to refetch an object or as key for a cache. The ID type appears in a JSON response as a String; however, it is not intended to be human-readable. When expected as an input type, any string (such as `\"4\"`) or integer (such as `4`) input value will be accepted as an ID."),
    ]

    public init(query: ObjectType, mutation: ObjectType?, types extra: [NamedType]) {
        var ordered: [NamedType] = [.object(query)]
        if let mutation { ordered.append(.object(mutation)) }
        ordered += extra
        ordered += Self.builtInScalars.map { .scalar($0) }
        ordered += Introspection.types
        var types: [String: NamedType] = [:]
        var names: [String] = []
        for type in ordered where types[type.name] == nil {
            types[type.name] = type
            names.append(type.name)
        }
        self.types = types
        typeNames = names
        queryType = query.name
        mutationType = mutation?.name
    }

    public func object(_ name: String) -> ObjectType? {
        if case .object(let type)? = types[name] { return type }
        return nil
    }

    /// The field `name` of `typeName`, meta-fields included.
    func field(_ name: String, on typeName: String) -> Field? {
        if name == "__typename" { return Introspection.typenameField }
        if typeName == queryType {
            if name == "__schema" { return Introspection.schemaField }
            if name == "__type" { return Introspection.typeField }
        }
        return object(typeName)?.field(name)
    }

    /// Types printed and introspected: not the introspection types themselves.
    public var userTypeNames: [String] { typeNames.filter { !$0.hasPrefix("__") } }
}

/// `@skip`, `@include`, `@deprecated`, `@specifiedBy`: the directives this server knows.
struct DirectiveDefinition: Sendable {
    let name: String
    let description: String
    let locations: [String]
    let arguments: [InputValue]

    static let all: [DirectiveDefinition] = [
        DirectiveDefinition(name: "include", description: "Directs the executor to include this field or fragment only when the `if` argument is true.",
                            locations: ["FIELD", "FRAGMENT_SPREAD", "INLINE_FRAGMENT"],
                            arguments: [InputValue("if", .nonNull(.named("Boolean")), description: "Included when true.")]),
        DirectiveDefinition(name: "skip", description: "Directs the executor to skip this field or fragment when the `if` argument is true.",
                            locations: ["FIELD", "FRAGMENT_SPREAD", "INLINE_FRAGMENT"],
                            arguments: [InputValue("if", .nonNull(.named("Boolean")), description: "Skipped when true.")]),
        DirectiveDefinition(name: "deprecated", description: "Marks an element of a GraphQL schema as no longer supported.",
                            locations: ["FIELD_DEFINITION", "ARGUMENT_DEFINITION", "INPUT_FIELD_DEFINITION", "ENUM_VALUE"],
                            arguments: [InputValue("reason", .named("String"), description: "Explains why this element was deprecated, usually also including a suggestion for how to access supported similar data. Formatted using the Markdown syntax, as specified by [CommonMark](https://commonmark.org/).", defaultValue: .string("No longer supported"))]),
        DirectiveDefinition(name: "specifiedBy", description: "Exposes a URL that specifies the behavior of this scalar.",
                            locations: ["SCALAR"],
                            arguments: [InputValue("url", .nonNull(.named("String")), description: "The URL that specifies the behavior of this scalar.")]),
    ]

    static func named(_ name: String) -> DirectiveDefinition? { all.first { $0.name == name } }
}
