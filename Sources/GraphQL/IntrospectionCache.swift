import Foundation

/// Answers to introspection queries, kept by request. An operation whose root fields are all
/// meta-fields (`__schema`, `__type`, `__typename`) is answered from the schema alone, so the
/// same document, operation name and variables always get the same bytes: parsing, validating
/// and executing the standard introspection query once (most of what such a request costs)
/// serves every client that sends it again (GraphiQL, Apollo, codegen send one fixed text).
/// One cache per schema and limits: a kept answer passed validation under them.
/// Bounded: at most `capacity` answers (the least recently used goes), none over
/// `maximumAnswerBytes`, documents at most what the caller lets in (64 KiB for the gateway).
/// The key is the request's whole text, not a digest of it, so two requests never share an
/// answer unless they are the same request.
public final class IntrospectionCache: @unchecked Sendable {
    struct Key: Hashable {
        let query: String
        let operationName: String?
        /// The variables in the order given (a caller that wants hits for the same variables
        /// in another order sorts them).
        let variables: String

        init(_ request: Request) {
            query = request.query
            operationName = request.operationName
            variables = GraphQLValue.object(request.variables).json
        }
    }

    public let capacity: Int
    public let maximumAnswerBytes: Int
    private let lock = NSLock()
    private var answers: [Key: (answer: String, used: UInt64)] = [:]
    /// Counts uses: the entry with the smallest `used` is the least recently used.
    private var clock: UInt64 = 0

    public init(capacity: Int = 64, maximumAnswerBytes: Int = 512 * 1024) {
        self.capacity = capacity
        self.maximumAnswerBytes = maximumAnswerBytes
    }

    /// The kept answer (the response's JSON) to this very request, if any.
    public func answer(for request: Request) -> String? {
        // Every meta-field starts with "__" (spec 4.1, reserved names): a document without it
        // is no introspection query, and most requests cost no key.
        guard request.query.contains("__") else { return nil }
        let key = Key(request)
        lock.lock()
        defer { lock.unlock() }
        guard let entry = answers[key] else { return nil }
        clock += 1
        answers[key] = (entry.answer, clock)
        return entry.answer
    }

    /// Keeps `answer` (the JSON of `prepared`'s response) when `prepared` is an introspection
    /// query; whether it is one.
    @discardableResult
    public func keep(_ answer: String, for request: Request, prepared: PreparedOperation, schema: Schema) -> Bool {
        guard prepared.isIntrospection(schema: schema) else { return false }
        guard answer.utf8.count <= maximumAnswerBytes, capacity > 0 else { return true }
        let key = Key(request)
        lock.lock()
        defer { lock.unlock() }
        clock += 1
        if answers.updateValue((answer, clock), forKey: key) == nil, answers.count > capacity,
           let oldest = answers.min(by: { $0.value.used < $1.value.used })?.key {
            answers[oldest] = nil
        }
        return true
    }

    public var count: Int {
        lock.lock()
        defer { lock.unlock() }
        return answers.count
    }
}

extension PreparedOperation {
    /// A query whose root fields (after `@skip` / `@include`) are all meta-fields: its answer
    /// depends on the schema, the document and the variables only, never on the caller.
    public func isIntrospection(schema: Schema) -> Bool {
        operation.type == .query && rootFieldNames(schema: schema).allSatisfy { $0.hasPrefix("__") }
    }
}
