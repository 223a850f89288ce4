/// An entry of a response's `errors[]`: message, where in the document, where in the result,
/// and `extensions.code`.
public struct GraphQLError: Error, Sendable, Equatable {
    public struct Location: Sendable, Equatable {
        public let line: Int
        public let column: Int
    }

    public var message: String
    public var locations: [Location]
    public var path: [GraphQLValue]
    public var code: String
    /// Extra `extensions` members beside `code` (e.g. `retryAfter`).
    public var extensions: [(String, GraphQLValue)]

    public init(_ message: String, code: String, locations: [Location] = [], path: [GraphQLValue] = [],
                extensions: [(String, GraphQLValue)] = []) {
        self.message = message
        self.code = code
        self.locations = locations
        self.path = path
        self.extensions = extensions
    }

    public static func == (lhs: GraphQLError, rhs: GraphQLError) -> Bool {
        lhs.message == rhs.message && lhs.code == rhs.code && lhs.locations == rhs.locations && lhs.path == rhs.path
    }

    /// Codes of this module's own errors (those from resolvers carry the service's codes).
    public enum Code {
        public static let parseFailed = "GRAPHQL_PARSE_FAILED"
        public static let validationFailed = "GRAPHQL_VALIDATION_FAILED"
        public static let badUserInput = "BAD_USER_INPUT"
        public static let operationNotFound = "OPERATION_RESOLUTION_FAILURE"
        public static let internalError = "INTERNAL_SERVER_ERROR"
    }

    public var value: GraphQLValue {
        var pairs: [(String, GraphQLValue)] = [("message", .string(message))]
        if !locations.isEmpty {
            pairs.append(("locations", .list(locations.map { .object([("line", .int($0.line)), ("column", .int($0.column))]) })))
        }
        if !path.isEmpty { pairs.append(("path", .list(path))) }
        pairs.append(("extensions", .object([("code", .string(code))] + extensions)))
        return .object(pairs)
    }
}
