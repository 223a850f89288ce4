import IdentityBasics

/// What runs a call of the typed API (`Operations`). The gateway's transport runs the declared
/// route's whole pipeline, the one its HTTP door runs; a door holds an `Operations` and never
/// sees how the call is carried out.
public protocol OperationTransport: Sendable {
    /// Runs `operation` with its path parameters, query string and body for `caller`.
    func call(_ operation: OperationName, parameters: [String: String], query: [String: String], body: JSONValue?,
              as caller: OperationCaller) async throws(OperationProblem) -> OperationAnswer
}

/// A successful answer: its status, its `data` (null for a 204) and the headers worth keeping
/// (rate limits, caching).
public struct OperationAnswer: Sendable {
    public let status: Int
    public let data: JSONValue
    public let headers: [(String, String)]

    public init(status: Int, data: JSONValue, headers: [(String, String)] = []) {
        self.status = status
        self.data = data
        self.headers = headers
    }
}

/// A refusal, as the problem document of the HTTP answer says it: the status, the catalogue's
/// code, the detail, the field errors and how long to wait when rate-limited.
public struct OperationProblem: Error, Sendable, Equatable {
    public let status: Int
    public let code: String
    public let detail: String
    /// `errors` of a validation failure: `[{location, message}]`.
    public let errors: JSONValue?
    public let retryAfter: Int?

    public init(status: Int, code: String, detail: String, errors: JSONValue? = nil, retryAfter: Int? = nil) {
        self.status = status
        self.code = code
        self.detail = detail
        self.errors = errors
        self.retryAfter = retryAfter
    }

    /// A body field the caller did not give: the 422 the route's body reader answers for it.
    public static func missing(_ field: String) -> OperationProblem {
        OperationProblem(status: 422, code: "auth/validation-failed", detail: "The request body has invalid fields.",
                         errors: .array([.object(["location": .string("body." + field), "message": .string("is required")])]))
    }
}
