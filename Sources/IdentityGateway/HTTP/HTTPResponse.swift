import Foundation
import IdentityKit

/// A response to write: status, extra headers and body. `X-Request-Id` is added by the server.
struct HTTPResponse: Sendable {
    var status: Int
    var headers: [(String, String)]
    var body: Data

    init(status: Int, headers: [(String, String)] = [], body: Data) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// `{"data": …}` with `application/json`.
    static func data(_ value: JSONValue, status: Int = 200, headers: [(String, String)] = []) -> HTTPResponse {
        json(.object(["data": value]), status: status, headers: headers)
    }

    static func json(_ value: JSONValue, status: Int = 200, headers: [(String, String)] = []) -> HTTPResponse {
        HTTPResponse(status: status, headers: [("Content-Type", "application/json")] + headers,
                     body: Data(value.serialized.utf8))
    }

    static let noContent = HTTPResponse(status: 204, body: Data())

    /// RFC 9457 problem+json for a catalogue error.
    static func problem(_ error: ServiceError, requestId: String, headers: [(String, String)] = []) -> HTTPResponse {
        var object: [String: JSONValue] = [
            "type": .string("/api/docs#error-" + error.code),
            "title": .string(reasonPhrase(error.status)),
            "status": JSONValue(error.status),
            "code": .string(error.code),
            "detail": .string(error.detail),
            "request_id": .string(requestId),
        ]
        if !error.errors.isEmpty {
            object["errors"] = .array(error.errors.map {
                .object(["location": .string($0.location), "message": .string($0.message)])
            })
        }
        var extra = headers + (error.rateLimit?.pairs ?? [])
        if let seconds = error.retryAfter {
            extra.append(("Retry-After", String(seconds)))
        } else if error.status == 503 {
            extra.append(("Retry-After", "1"))
        }
        return HTTPResponse(status: error.status, headers: [("Content-Type", "application/problem+json")] + extra,
                            body: Data(JSONValue.object(object).serialized.utf8))
    }

    static func reasonPhrase(_ status: Int) -> String {
        switch status {
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 409: "Conflict"
        case 413: "Content Too Large"
        case 415: "Unsupported Media Type"
        case 422: "Unprocessable Content"
        case 429: "Too Many Requests"
        case 503: "Service Unavailable"
        default: status >= 500 ? "Internal Server Error" : "Error"
        }
    }
}

/// What a route produces: an answer now, or work that answers later without holding an HTTP
/// thread (a command waiting for a worker's reply).
enum RouteResult: Sendable {
    case now(HTTPResponse)
    case later(@Sendable (_ respond: @escaping @Sendable (HTTPResponse) -> Void) -> Void)
}

extension RouteResult {
    /// The same result with `headers` added to whatever answer it produces (now or later).
    func adding(headers: [(String, String)]) -> RouteResult {
        guard !headers.isEmpty else { return self }
        switch self {
        case .now(var response):
            response.headers += headers
            return .now(response)
        case .later(let work):
            return .later { respond in
                work { response in
                    var response = response
                    response.headers += headers
                    respond(response)
                }
            }
        }
    }
}
