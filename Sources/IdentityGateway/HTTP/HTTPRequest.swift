import Foundation
import IdentityKit

/// A request as the routes see it: method, path, headers, and the whole body.
struct HTTPRequest: Sendable {
    let method: String
    let path: String
    /// Every header by lower-case name; a name sent on several lines has its values joined
    /// with ", " in order (`HeaderLines.combined`).
    let headers: [String: String]
    let body: Data
    /// The client's address: the socket peer, or the right-most `X-Forwarded-For` hop that is
    /// not one of `IDENTITY_TRUSTED_PROXIES` when the peer is one of them (`TrustedProxies`).
    /// Sessions record it; limits keyed by client use it.
    let clientIP: String
    /// The socket peer as accepted, whatever `X-Forwarded-For` says.
    let peerIP: String
    /// `X-Request-Id`: the client's own when it sent a sane one, else a new one.
    let requestId: String
    /// Query-string arguments, decoded (a repeated name keeps its first value).
    var query: [String: String] = [:]
    /// Path parameters matched by the route (`app_id`).
    var parameters: [String: String] = [:]
    /// The app `ClientEdge` resolved from this request's `X-App-Key` (else `Host`), so the
    /// pipeline does not resolve it again; nil when it did not (the pipeline then does, and
    /// answers an unknown key).
    var resolvedApp: AppRecord? = nil
    /// A web console user acting on one of their apps through the admin API's operations
    /// (`ConsoleAdminStep`): set only in-process by the operation API's transport, never from
    /// anything a request carries on the wire.
    var console: ConsoleCredential? = nil

    /// Header lookup by lower-case name.
    func header(_ name: String) -> String? { headers[name] }
}

/// The console session (its token) and the app it acts on: the authority of an admin operation
/// the console calls in-process in place of the app's secret key.
struct ConsoleCredential: Sendable {
    let sessionToken: String
    let appId: String
}
