/// The codes of an app's auth hooks (`AuthHook`): the app's own backend said no, or could not be
/// asked and the hook fails closed.
extension ServiceError {
    /// 403: the hook refused; `detail` is the hook's own message (`hookRefused(message:)`).
    public static let hookRefused = ServiceError(code: "auth/hook-refused", status: 403,
                                                 detail: "The app refused this request.")
    public static func hookRefused(message: String) -> ServiceError {
        ServiceError(code: hookRefused.code, status: hookRefused.status, detail: message)
    }
    /// 503: the hook timed out, failed or answered something not its schema, and fails closed.
    public static let hookFailed = ServiceError(code: "auth/hook-failed", status: 503,
                                                detail: "The app's hook could not be reached; try again later.")
}
