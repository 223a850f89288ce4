/// What the store tells its callers. Messages are for logs only.
public enum StoreError: Error, CustomStringConvertible, Sendable {
    /// The database could not be reached or the connection broke: the caller answers 503.
    case unavailable(String)
    /// A unique constraint decided a race or refused a duplicate; `constraint` names the index.
    case uniqueViolation(constraint: String)
    case failed(sqlState: String, message: String)
    /// A row lacked a selected column, had NULL where a value was required, or a value that
    /// does not parse: a bug in a query or its reader, never a client's fault.
    case malformedRow(column: String, reason: String)

    public var description: String {
        switch self {
        case .unavailable(let message): "store unavailable: \(message)"
        case .uniqueViolation(let constraint): "unique violation on \(constraint)"
        case .failed(let state, let message): "SQLSTATE \(state): \(message)"
        case .malformedRow(let column, let reason): "malformed row: column \(column): \(reason)"
        }
    }
}
