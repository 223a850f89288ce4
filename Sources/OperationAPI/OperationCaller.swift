import IdentityBasics

/// Who calls an operation, as the door received them: the credentials (`X-App-Key`, an
/// `Authorization` bearer: an access token, a session token or a secret key) and what the
/// pipeline records of the client (address, request id, `Host`, `User-Agent`, `Origin`). A door
/// builds it from its own request; the operation's access rule decides what it may do.
public struct OperationCaller: Sendable {
    /// The door's request headers by lower-case name, less those of its own body.
    public private(set) var headers: [String: String]
    public let clientIP: String
    public let peerIP: String
    public let requestId: String
    /// A web console user acting on `appId` through its admin operations: the console session's
    /// token stands where the app's secret key would (`onConsole`).
    public private(set) var console: (sessionToken: String, appId: String)?

    public init(headers: [String: String], clientIP: String, peerIP: String, requestId: String) {
        self.headers = headers.filter { !Self.bodyHeaders.contains($0.key) }
        self.clientIP = clientIP
        self.peerIP = peerIP
        self.requestId = requestId
    }

    /// Headers that describe the door's body (and the cookie of a browser's session, which an
    /// in-process call never carries): never passed on.
    static let bodyHeaders: Set<String> = ["content-length", "content-type", "transfer-encoding", "cookie"]

    /// The bearer credential the caller sent, if any.
    public var bearer: String? {
        guard let value = headers["authorization"], value.lowercased().hasPrefix("bearer ") else { return nil }
        return String(value.dropFirst(7))
    }

    /// The same caller as the console user of `sessionToken` acting on `appId`: the transport
    /// hands the pipeline this credential in-process (no header can claim it), and the pipeline
    /// checks the session and the user's role in the app before the operation runs.
    public func onConsole(sessionToken: String, appId: String) -> OperationCaller {
        var caller = self
        caller.headers["x-app-key"] = nil
        caller.headers["authorization"] = "Bearer " + sessionToken
        caller.console = (sessionToken, appId)
        return caller
    }

    /// The same caller with `token` as its bearer: a step that follows a sign-in acts as its user.
    public func signedIn(as token: String) -> OperationCaller {
        var caller = self
        caller.headers["authorization"] = "Bearer " + token
        return caller
    }
}
