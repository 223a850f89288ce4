/// The one mapping from a failure to what a caller is told, used by the gateway for a request
/// and by every worker for a command: a `ServiceError` is answered as it is; a store that cannot
/// be reached is `auth/unavailable` (counted, logged at warning); anything else is an internal
/// cause, logged here with `fields` and answered only as `auth/internal`, so no cause leaks.
extension ServiceError {
    /// `what` names the work in the log line ("request", "command").
    public static func answering(_ failure: any Error, what: String, fields: [String: String]) -> ServiceError {
        switch failure {
        case let error as ServiceError:
            return error
        case StoreError.unavailable(let reason):
            ServiceMetrics.unavailable.inc("store")
            Log.warning("store unavailable", fields.merging(["reason": reason]) { $1 })
            return .unavailable
        default:
            Log.error("\(what) failed", fields.merging(["error": String(describing: failure)]) { $1 })
            return .internal
        }
    }
}
