import Foundation

/// A request as the routes see it: method, path, the headers they need, and the whole body.
struct HTTPRequest: Sendable {
    let method: String
    let path: String
    let headers: [String: String]
    let body: Data
    let clientIP: String
    /// `X-Request-Id`: the client's own when it sent a sane one, else a new one.
    let requestId: String
    /// Path parameters matched by the route (`app_id`).
    var parameters: [String: String] = [:]

    /// Header lookup by lower-case name.
    func header(_ name: String) -> String? { headers[name] }
}

/// The headers the gateway reads, fetched from libmicrohttpd by name.
enum RequestHeaders {
    static let names = ["content-type", "x-app-key", "authorization", "x-request-id", "user-agent",
                        "content-length"]
}
