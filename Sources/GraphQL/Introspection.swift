/// The introspection system (spec section 4): `__schema`, `__type(name:)`, `__typename` and
/// the `__Type` family. A `__Type` value is `{"__ref": "<type as written>"}` (e.g. `[String!]!`);
/// its fields are computed from the schema when asked, so recursive types cost nothing until
/// a query walks them. Other introspection objects are built whole.
enum Introspection {
    static let typenameField = Field("__typename", .nonNull(.named("String")), description: "The name of the current Object type at runtime.")
    static let schemaField = Field("__schema", .nonNull(.named("__Schema")), description: "Access the current type schema of this server.") { info in
        schemaValue(info.schema)
    }
    static let typeField = Field("__type", .named("__Type"), arguments: [InputValue("name", .nonNull(.named("String")))],
                                 description: "Request the type information of a single type.") { info in
        guard case .string(let name) = info.argument("name"), info.schema.types[name] != nil else { return .null }
        return typeRef(.named(name))
    }

    static func typeRef(_ type: TypeRef) -> GraphQLValue { .object([("__ref", .string(type.description))]) }

    private static func ref(_ info: ResolveInfo) -> TypeRef? {
        info.parent["__ref"]?.string.flatMap { TypeRef.parse(Substring($0)) }
    }

    private static func named(_ info: ResolveInfo) -> NamedType? {
        guard case .named(let name)? = ref(info) else { return nil }
        return info.schema.types[name]
    }

    private static func includeDeprecated(_ info: ResolveInfo) -> Bool { info.argument("includeDeprecated") == .bool(true) }

    static func schemaValue(_ schema: Schema) -> GraphQLValue {
        .object([
            ("description", .null),
            ("types", .list(schema.typeNames.map { typeRef(.named($0)) })),
            ("queryType", typeRef(.named(schema.queryType))),
            ("mutationType", schema.mutationType.map { typeRef(.named($0)) } ?? .null),
            ("subscriptionType", .null),
            ("directives", .list(DirectiveDefinition.all.map { directive in
                .object([
                    ("name", .string(directive.name)),
                    ("description", .string(directive.description)),
                    ("isRepeatable", .bool(false)),
                    ("locations", .list(directive.locations.map { .string($0) })),
                    ("args", .list(directive.arguments.map { inputValue($0, schema: schema) })),
                ])
            })),
        ])
    }

    static func inputValue(_ value: InputValue, schema: Schema) -> GraphQLValue {
        .object([
            ("name", .string(value.name)),
            ("description", value.description.map { .string($0) } ?? .null),
            ("type", typeRef(value.type)),
            ("defaultValue", value.defaultValue.map { .string(Coercion.printValue($0, value.type, schema: schema)) } ?? .null),
            ("isDeprecated", .bool(false)),
            ("deprecationReason", .null),
        ])
    }

    static func fieldValue(_ field: Field, schema: Schema) -> GraphQLValue {
        .object([
            ("name", .string(field.name)),
            ("description", field.description.map { .string($0) } ?? .null),
            ("args", .list(field.arguments.map { inputValue($0, schema: schema) })),
            ("type", typeRef(field.type)),
            ("isDeprecated", .bool(field.deprecationReason != nil)),
            ("deprecationReason", field.deprecationReason.map { .string($0) } ?? .null),
        ])
    }

    private static let includeDeprecatedArgument = InputValue("includeDeprecated", .named("Boolean"), defaultValue: .bool(false))

    private static func string(_ name: String, _ type: TypeRef = .named("String")) -> Field { Field(name, type) }

    static let types: [NamedType] = [
        .object(ObjectType("__Schema", description: "A GraphQL Schema defines the capabilities of a GraphQL server. It exposes all available types and directives on the server, as well as the entry points for query, mutation, and subscription operations.", fields: [
            string("description"),
            Field("types", .nonNull(.list(.nonNull(.named("__Type")))), description: "A list of all types supported by this server."),
            Field("queryType", .nonNull(.named("__Type")), description: "The type that query operations will be rooted at."),
            Field("mutationType", .named("__Type"), description: "If this server supports mutation, the type that mutation operations will be rooted at."),
            Field("subscriptionType", .named("__Type"), description: "If this server support subscription, the type that subscription operations will be rooted at."),
            Field("directives", .nonNull(.list(.nonNull(.named("__Directive")))), description: "A list of all directives supported by this server."),
        ])),
        .object(ObjectType("__Type", description: "The fundamental unit of any GraphQL Schema is the type. There are many kinds of types in GraphQL as represented by the `__TypeKind` enum.\n\nDepending on the kind of a type, certain fields describe information about that type. Scalar types provide no information beyond a name, description and optional `specifiedByURL`, while Enum types provide their values. Object and Interface types provide the fields they describe. Abstract types, Union and Interface, provide the Object types possible at runtime. List and NonNull types compose other types.", fields: [
            Field("kind", .nonNull(.named("__TypeKind"))) { info in
                switch ref(info) {
                case .nonNull?: return .string("NON_NULL")
                case .list?: return .string("LIST")
                default:
                    switch named(info) {
                    case .scalar?: return .string("SCALAR")
                    case .object?: return .string("OBJECT")
                    case .inputObject?: return .string("INPUT_OBJECT")
                    case .enumType?: return .string("ENUM")
                    case nil: return .null
                    }
                }
            },
            Field("name", .named("String")) { info in named(info).map { .string($0.name) } ?? .null },
            Field("description", .named("String")) { info in named(info)?.description.map { .string($0) } ?? .null },
            Field("specifiedByURL", .named("String")) { info in
                if case .scalar(let scalar)? = named(info), let url = scalar.specifiedByURL { return .string(url) }
                return .null
            },
            Field("fields", .list(.nonNull(.named("__Field"))), arguments: [includeDeprecatedArgument]) { info in
                guard case .object(let object)? = named(info) else { return .null }
                let all = includeDeprecated(info)
                return .list(object.fields.filter { all || $0.deprecationReason == nil }.map { fieldValue($0, schema: info.schema) })
            },
            Field("interfaces", .list(.nonNull(.named("__Type")))) { info in
                if case .object? = named(info) { return .list([]) }
                return .null
            },
            Field("possibleTypes", .list(.nonNull(.named("__Type")))) { _ in .null },
            Field("enumValues", .list(.nonNull(.named("__EnumValue"))), arguments: [includeDeprecatedArgument]) { info in
                guard case .enumType(let enumType)? = named(info) else { return .null }
                return .list(enumType.values.map { value in
                    .object([("name", .string(value)), ("description", .null), ("isDeprecated", .bool(false)), ("deprecationReason", .null)])
                })
            },
            Field("inputFields", .list(.nonNull(.named("__InputValue"))), arguments: [includeDeprecatedArgument]) { info in
                guard case .inputObject(let input)? = named(info) else { return .null }
                return .list(input.fields.map { inputValue($0, schema: info.schema) })
            },
            Field("ofType", .named("__Type")) { info in
                switch ref(info) {
                case .nonNull(let inner)?, .list(let inner)?: return typeRef(inner)
                default: return .null
                }
            },
            Field("isOneOf", .named("Boolean")) { info in
                if case .inputObject? = named(info) { return .bool(false) }
                return .null
            },
        ])),
        .object(ObjectType("__Field", description: "Object and Interface types are described by a list of Fields, each of which has a name, potentially a list of arguments, and a return type.", fields: [
            string("name", .nonNull(.named("String"))),
            string("description"),
            Field("args", .nonNull(.list(.nonNull(.named("__InputValue")))), arguments: [includeDeprecatedArgument]),
            Field("type", .nonNull(.named("__Type"))),
            Field("isDeprecated", .nonNull(.named("Boolean"))),
            string("deprecationReason"),
        ])),
        .object(ObjectType("__InputValue", description: "Arguments provided to Fields or Directives and the input fields of an InputObject are represented as Input Values which describe their type and optionally a default value.", fields: [
            string("name", .nonNull(.named("String"))),
            string("description"),
            Field("type", .nonNull(.named("__Type"))),
            Field("defaultValue", .named("String"), description: "A GraphQL-formatted string representing the default value for this input value."),
            Field("isDeprecated", .nonNull(.named("Boolean"))),
            string("deprecationReason"),
        ])),
        .object(ObjectType("__EnumValue", description: "One possible value for a given Enum. Enum values are unique values, not a placeholder for a string or numeric value. However an Enum value is returned in a JSON response as a string.", fields: [
            string("name", .nonNull(.named("String"))),
            string("description"),
            Field("isDeprecated", .nonNull(.named("Boolean"))),
            string("deprecationReason"),
        ])),
        .object(ObjectType("__Directive", description: "A Directive provides a way to describe alternate runtime execution and type validation behavior in a GraphQL document.\n\nIn some cases, you need to provide options to alter GraphQL's execution behavior in ways field arguments will not suffice, such as conditionally including or skipping a field. Directives provide this by describing additional information to the executor.", fields: [
            string("name", .nonNull(.named("String"))),
            string("description"),
            Field("isRepeatable", .nonNull(.named("Boolean"))),
            Field("locations", .nonNull(.list(.nonNull(.named("__DirectiveLocation"))))),
            Field("args", .nonNull(.list(.nonNull(.named("__InputValue")))), arguments: [includeDeprecatedArgument]),
        ])),
        .enumType(EnumType("__TypeKind", description: "An enum describing what kind of type a given `__Type` is.",
                           values: ["SCALAR", "OBJECT", "INTERFACE", "UNION", "ENUM", "INPUT_OBJECT", "LIST", "NON_NULL"])),
        .enumType(EnumType("__DirectiveLocation", description: "A Directive can be adjacent to many parts of the GraphQL language, a __DirectiveLocation describes one such possible adjacencies.",
                           values: ["QUERY", "MUTATION", "SUBSCRIPTION", "FIELD", "FRAGMENT_DEFINITION", "FRAGMENT_SPREAD", "INLINE_FRAGMENT",
                                    "VARIABLE_DEFINITION", "SCHEMA", "SCALAR", "OBJECT", "FIELD_DEFINITION", "ARGUMENT_DEFINITION", "INTERFACE",
                                    "UNION", "ENUM", "ENUM_VALUE", "INPUT_OBJECT", "INPUT_FIELD_DEFINITION"])),
    ]
}
