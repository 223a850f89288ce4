/// A recursive-descent parser for executable documents. Nesting (selection sets, list and
/// object values, wrapped types) is bounded by `maximumNesting`, so a hostile document is a
/// syntax error, never a deep native stack; the token count is bounded by the document size,
/// which the caller caps.
public struct Parser {
    public static let maximumNesting = 64

    private var lexer: Lexer
    private var token: Token
    private var nesting = 0

    public static func parse(_ source: String) throws(GraphQLError) -> Document {
        do {
            var parser = try Parser(source)
            return try parser.document()
        } catch let error as GraphQLError {
            throw error
        } catch {
            throw GraphQLError("Syntax Error", code: GraphQLError.Code.parseFailed)
        }
    }

    private init(_ source: String) throws {
        lexer = Lexer(source)
        token = try lexer.next()
    }

    private func error(_ message: String) -> GraphQLError {
        GraphQLError("Syntax Error: " + message, code: GraphQLError.Code.parseFailed, locations: [token.location])
    }

    private var tokenDescription: String {
        switch token.kind {
        case .punctuator(let text): "\"\(text)\""
        case .name(let name): "Name \"\(name)\""
        case .int(let text): "Int \"\(text)\""
        case .float(let text): "Float \"\(text)\""
        case .string: "String"
        case .end: "<EOF>"
        }
    }

    private mutating func advance() throws { token = try lexer.next() }

    private func peek(_ punctuator: String) -> Bool { token.kind == .punctuator(punctuator) }

    private mutating func skip(_ punctuator: String) throws -> Bool {
        guard peek(punctuator) else { return false }
        try advance()
        return true
    }

    private mutating func expect(_ punctuator: String) throws {
        guard peek(punctuator) else { throw error("Expected \"\(punctuator)\", found \(tokenDescription).") }
        try advance()
    }

    private mutating func name() throws -> String {
        guard case .name(let name) = token.kind else { throw error("Expected Name, found \(tokenDescription).") }
        try advance()
        return name
    }

    private var keyword: String? {
        if case .name(let name) = token.kind { return name }
        return nil
    }

    private mutating func nested<T>(_ body: (inout Parser) throws -> T) throws -> T {
        nesting += 1
        defer { nesting -= 1 }
        guard nesting <= Self.maximumNesting else { throw error("Document nests too deeply.") }
        return try body(&self)
    }

    mutating func document() throws -> Document {
        var document = Document(operations: [], fragments: [])
        repeat {
            let location = token.location
            if peek("{") {
                document.operations.append(OperationDefinition(type: .query, name: nil, variables: [], directives: [],
                                                               selectionSet: try selectionSet(), location: location))
                continue
            }
            switch keyword {
            case "query", "mutation", "subscription":
                document.operations.append(try operation())
            case "fragment":
                document.fragments.append(try fragment())
            default:
                if case .string = token.kind { throw error("Unexpected \(tokenDescription).") }
                if let keyword, ["schema", "scalar", "type", "interface", "union", "enum", "input", "directive", "extend"].contains(keyword) {
                    throw GraphQLError("The \(keyword) definition is not executable.", code: GraphQLError.Code.validationFailed,
                                       locations: [location])
                }
                throw error("Unexpected \(tokenDescription).")
            }
        } while token.kind != .end
        return document
    }

    private mutating func operation() throws -> OperationDefinition {
        let location = token.location
        let type = OperationType(rawValue: try name())!
        var operationName: String?
        if case .name = token.kind { operationName = try name() }
        var variables: [VariableDefinition] = []
        if try skip("(") {
            repeat {
                let location = token.location
                try expect("$")
                let variable = try name()
                try expect(":")
                let type = try typeRef()
                var defaultValue: ValueNode?
                if try skip("=") { defaultValue = try value(constant: true) }
                _ = try directives(constant: true)
                variables.append(VariableDefinition(name: variable, type: type, defaultValue: defaultValue, location: location))
            } while !(try skip(")"))
        }
        let directives = try directives(constant: false)
        return OperationDefinition(type: type, name: operationName, variables: variables, directives: directives,
                                   selectionSet: try selectionSet(), location: location)
    }

    private mutating func fragment() throws -> FragmentDefinition {
        let location = token.location
        try advance()
        let fragmentName = try name()
        if fragmentName == "on" { throw error("Unexpected Name \"on\".") }
        guard keyword == "on" else { throw error("Expected \"on\", found \(tokenDescription).") }
        try advance()
        let condition = try name()
        return FragmentDefinition(name: fragmentName, typeCondition: condition, directives: try directives(constant: false),
                                  selectionSet: try selectionSet(), location: location)
    }

    private mutating func selectionSet() throws -> [Selection] {
        try nested { parser in
            try parser.expect("{")
            var selections: [Selection] = []
            repeat {
                selections.append(try parser.selection())
            } while !(try parser.skip("}"))
            return selections
        }
    }

    private mutating func selection() throws -> Selection {
        let location = token.location
        if try skip("...") {
            if keyword == "on" {
                try advance()
                let condition = try name()
                return .inlineFragment(typeCondition: condition, directives: try directives(constant: false),
                                       selectionSet: try selectionSet(), location: location)
            }
            if case .name = token.kind {
                let fragmentName = try name()
                return .fragmentSpread(name: fragmentName, directives: try directives(constant: false), location: location)
            }
            return .inlineFragment(typeCondition: nil, directives: try directives(constant: false),
                                   selectionSet: try selectionSet(), location: location)
        }
        var alias: String?
        var fieldName = try name()
        if try skip(":") {
            alias = fieldName
            fieldName = try name()
        }
        let arguments = try arguments(constant: false)
        let directives = try directives(constant: false)
        let selections = peek("{") ? try selectionSet() : nil
        return .field(FieldNode(alias: alias, name: fieldName, arguments: arguments, directives: directives,
                                selectionSet: selections, location: location))
    }

    private mutating func arguments(constant: Bool) throws -> [Argument] {
        guard try skip("(") else { return [] }
        var arguments: [Argument] = []
        repeat {
            let location = token.location
            let argumentName = try name()
            try expect(":")
            arguments.append(Argument(name: argumentName, value: try value(constant: constant), location: location))
        } while !(try skip(")"))
        return arguments
    }

    private mutating func directives(constant: Bool) throws -> [Directive] {
        var directives: [Directive] = []
        while peek("@") {
            let location = token.location
            try advance()
            let directiveName = try name()
            directives.append(Directive(name: directiveName, arguments: try arguments(constant: constant), location: location))
        }
        return directives
    }

    private mutating func value(constant: Bool) throws -> ValueNode {
        switch token.kind {
        case .punctuator("$") where !constant:
            try advance()
            return .variable(try name())
        case .punctuator("["):
            return try nested { parser in
                try parser.advance()
                var items: [ValueNode] = []
                while !(try parser.skip("]")) { items.append(try parser.value(constant: constant)) }
                return .list(items)
            }
        case .punctuator("{"):
            return try nested { parser in
                try parser.advance()
                var fields: [(name: String, value: ValueNode)] = []
                while !(try parser.skip("}")) {
                    let fieldName = try parser.name()
                    try parser.expect(":")
                    fields.append((fieldName, try parser.value(constant: constant)))
                }
                return .object(fields)
            }
        case .int(let text):
            try advance()
            return .int(text)
        case .float(let text):
            try advance()
            return .float(text)
        case .string(let text):
            try advance()
            return .string(text)
        case .name(let word):
            try advance()
            switch word {
            case "true": return .bool(true)
            case "false": return .bool(false)
            case "null": return .null
            default: return .enumValue(word)
            }
        default:
            throw error("Unexpected \(tokenDescription).")
        }
    }

    private mutating func typeRef() throws -> TypeRef {
        try nested { parser in
            var type: TypeRef
            if try parser.skip("[") {
                type = .list(try parser.typeRef())
                try parser.expect("]")
            } else {
                type = .named(try parser.name())
            }
            if try parser.skip("!") { type = .nonNull(type) }
            return type
        }
    }
}
