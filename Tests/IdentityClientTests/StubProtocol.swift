import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import IdentityClient

/// A `URLProtocol` that answers every request of its session from a test's handler, and
/// records the requests (with their bodies, which URLSession may hand over as a stream).
final class StubProtocol: URLProtocol {
    struct Stubbed: Sendable {
        var status: Int
        var headers: [String: String] = ["Content-Type": "application/json"]
        var body: Data = Data()
        /// Fails the request with this URL error instead of answering (a lost answer).
        var failure: URLError.Code?
        var delay: TimeInterval = 0
    }

    struct Seen: Sendable {
        let method: String
        let path: String
        let headers: [String: String]
        let body: Data
        var json: [String: Any]? { (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] }
        var bearer: String? { headers.first { $0.key.lowercased() == "authorization" }?.value.replacingOccurrences(of: "Bearer ", with: "") }
    }

    typealias Handler = @Sendable (Seen) -> Stubbed

    // One test at a time uses the stub (XCTest runs a class's tests serially); guarded by `lock`.
    nonisolated(unsafe) private static var handler: Handler = { _ in Stubbed(status: 500) }
    nonisolated(unsafe) private static var seen: [Seen] = []
    private static let lock = NSLock()

    static func install(_ handler: @escaping Handler) {
        lock.lock(); defer { lock.unlock() }
        self.handler = handler
        seen = []
    }

    static var requests: [Seen] {
        lock.lock(); defer { lock.unlock() }
        return seen
    }

    static func session() -> URLSession {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.protocolClasses = [StubProtocol.self]
        configuration.httpMaximumConnectionsPerHost = 200
        return URLSession(configuration: configuration)
    }

    override class func canInit(with request: URLRequest) -> Bool { true }
    override class func canonicalRequest(for request: URLRequest) -> URLRequest { request }

    override func startLoading() {
        var body = request.httpBody ?? Data()
        if body.isEmpty, let stream = request.httpBodyStream {
            stream.open()
            var buffer = [UInt8](repeating: 0, count: 4096)
            while stream.hasBytesAvailable {
                let n = stream.read(&buffer, maxLength: buffer.count)
                if n <= 0 { break }
                body.append(buffer, count: n)
            }
            stream.close()
        }
        let seen = Seen(method: request.httpMethod ?? "GET", path: request.url?.path ?? "",
                        headers: request.allHTTPHeaderFields ?? [:], body: body)
        StubProtocol.lock.lock()
        StubProtocol.seen.append(seen)
        let handler = StubProtocol.handler
        StubProtocol.lock.unlock()
        let answer = handler(seen)
        // The protocol object is used by one loading at a time (URLSession's contract).
        nonisolated(unsafe) let loading = self
        let deliver: @Sendable () -> Void = {
            if let failure = answer.failure {
                loading.client?.urlProtocol(loading, didFailWithError: URLError(failure))
                return
            }
            let response = HTTPURLResponse(url: loading.request.url!, statusCode: answer.status, httpVersion: "HTTP/1.1",
                                           headerFields: answer.headers)!
            loading.client?.urlProtocol(loading, didReceive: response, cacheStoragePolicy: .notAllowed)
            loading.client?.urlProtocol(loading, didLoad: answer.body)
            loading.client?.urlProtocolDidFinishLoading(loading)
        }
        if answer.delay > 0 {
            DispatchQueue.global().asyncAfter(deadline: .now() + answer.delay, execute: deliver)
        } else {
            deliver()
        }
    }

    override func stopLoading() {}
}

/// JSON answers the way the service writes them.
enum Answers {
    static func user(uid: String = "01j9x6k3m4q5r6s7t8v9w0x1y2", isGuest: Bool = false, firstName: String = "Jane") -> [String: Any] {
        ["uid": uid, "email": isGuest ? NSNull() : "jane@example.com", "email_verified": false, "phone": NSNull(),
         "username": NSNull(), "first_name": firstName, "last_name": NSNull(), "photo_url": NSNull(),
         "is_guest": isGuest, "has_password": !isGuest, "providers": isGuest ? [] : ["password"], "roles": [],
         "mfa_enabled": false, "created_at": "2026-09-27T10:15:00.123456Z"]
    }

    static func tokens(access: String, refresh: String, isGuest: Bool = false, uid: String = "01j9x6k3m4q5r6s7t8v9w0x1y2",
                       status: Int = 200) -> StubProtocol.Stubbed {
        data(["access_token": access, "token_type": "Bearer", "expires_in": 3600, "refresh_token": refresh,
              "session_id": "ses_1", "is_new_user": status == 201, "user": user(uid: uid, isGuest: isGuest)], status: status)
    }

    /// An access token shaped like the service's (the signature is not a real one: the client
    /// never verifies it). `serial` makes each one different.
    static func jwt(uid: String = "01j9x6k3m4q5r6s7t8v9w0x1y2", sid: String, iat: Date, lifetime: TimeInterval,
                    serial: Int) -> String {
        let claims: [String: Any] = ["sub": uid, "sid": sid, "iat": Int(iat.timeIntervalSince1970),
                                     "exp": Int(iat.timeIntervalSince1970 + lifetime), "jti": "jti-\(serial)",
                                     "amr": ["pwd"], "aal": 1, "is_guest": false, "roles": []]
        let payload = try! JSONSerialization.data(withJSONObject: claims, options: [.sortedKeys])
        return "eyJhbGciOiJSUzI1NiJ9." + Base64URL.encode(payload) + ".c2lnbmF0dXJl"
    }

    static func data(_ data: Any, status: Int = 200) -> StubProtocol.Stubbed {
        StubProtocol.Stubbed(status: status, body: try! JSONSerialization.data(withJSONObject: ["data": data]))
    }

    static func problem(_ status: Int, _ code: String, errors: [[String: String]] = [],
                        headers: [String: String] = [:]) -> StubProtocol.Stubbed {
        var body: [String: Any] = ["type": "about:blank", "title": "t", "status": status, "code": code,
                                   "detail": "d", "request_id": "req_1"]
        if !errors.isEmpty { body["errors"] = errors }
        return StubProtocol.Stubbed(status: status, headers: ["Content-Type": "application/problem+json"].merging(headers) { $1 },
                                    body: try! JSONSerialization.data(withJSONObject: body))
    }
}
