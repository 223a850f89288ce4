import Foundation

/// The schema as SDL (what `GET /graphql?sdl` serves): user types only, built-in scalars
/// and directives left implicit, as graphql-core's `print_schema` does.
public enum SchemaPrinter {
    public static func print(_ schema: Schema) -> String {
        var blocks: [String] = []
        for name in schema.userTypeNames {
            guard let type = schema.types[name] else { continue }
            switch type {
            case .scalar(let scalar):
                guard !Schema.builtInScalars.contains(where: { $0.name == scalar.name }) else { continue }
                blocks.append(description(scalar.description, indent: "") + "scalar \(scalar.name)")
            case .object(let object):
                let fields = object.fields.map { field in
                    description(field.description, indent: "  ") + "  " + field.name + arguments(field.arguments, schema: schema)
                        + ": \(field.type)" + deprecated(field.deprecationReason)
                }
                blocks.append(description(object.description, indent: "") + "type \(object.name) {\n" + fields.joined(separator: "\n") + "\n}")
            case .inputObject(let input):
                let fields = input.fields.map { description($0.description, indent: "  ") + "  " + inputValue($0, schema: schema) }
                blocks.append(description(input.description, indent: "") + "input \(input.name) {\n" + fields.joined(separator: "\n") + "\n}")
            case .enumType(let enumType):
                blocks.append(description(enumType.description, indent: "") + "enum \(enumType.name) {\n"
                              + enumType.values.map { "  " + $0 }.joined(separator: "\n") + "\n}")
            }
        }
        return blocks.joined(separator: "\n\n") + "\n"
    }

    private static func inputValue(_ value: InputValue, schema: Schema) -> String {
        value.name + ": \(value.type)" + (value.defaultValue.map { " = " + Coercion.printValue($0, value.type, schema: schema) } ?? "")
    }

    /// Inline, or one per line when any has a description (as graphql-core prints them).
    private static func arguments(_ arguments: [InputValue], schema: Schema) -> String {
        guard !arguments.isEmpty else { return "" }
        guard arguments.contains(where: { $0.description != nil }) else {
            return "(" + arguments.map { inputValue($0, schema: schema) }.joined(separator: ", ") + ")"
        }
        return "(\n" + arguments.map { description($0.description, indent: "    ") + "    " + inputValue($0, schema: schema) }
            .joined(separator: "\n") + "\n  )"
    }

    private static func deprecated(_ reason: String?) -> String {
        guard let reason else { return "" }
        return reason == "No longer supported" ? " @deprecated" : " @deprecated(reason: \(GraphQLValue.string(reason).json))"
    }

    private static func description(_ text: String?, indent: String) -> String {
        guard let text, !text.isEmpty else { return "" }
        let escaped = text.replacingOccurrences(of: "\"\"\"", with: "\\\"\"\"")
        return indent + "\"\"\"\n" + escaped.split(separator: "\n", omittingEmptySubsequences: false).map { indent + $0 }.joined(separator: "\n")
            + "\n" + indent + "\"\"\"\n"
    }
}

