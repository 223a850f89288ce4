import CCurl
import CCurlShim
import Foundation
import IdentityKit

/// Outbound HTTPS through libcurl: one blocking request per call, on the calling worker
/// thread, with a hard timeout. Used for providers' JWKS and Apple's token endpoints, and for
/// URLs apps set (`postForm(_:fields:policy:)`).
public struct OutboundHTTP: Sendable {
    public struct Response: Sendable {
        public let status: Int
        public let body: Data
        public let cacheControl: String?
        /// 1 (HTTP/1.x) or 2.
        public var httpVersion: Int = 1
    }

    public struct Failure: Error, CustomStringConvertible, Sendable {
        public let description: String
        /// Set when `OutboundAddressPolicy` refused the request: the address it would have
        /// connected to, or the scheme. The request never left.
        public var refusal: String?
        public init(description: String, refusal: String? = nil) {
            self.description = description
            self.refusal = refusal
        }
    }

    public let timeoutMilliseconds: Int

    public init(timeoutMilliseconds: Int = 5000) {
        self.timeoutMilliseconds = timeoutMilliseconds
    }

    /// Initializes libcurl once per process, before any thread uses it.
    public static func initialize() { _ = ccurlshim_global_init() }

    public func get(_ url: String) throws -> Response {
        try send(url, body: nil, contentType: nil)
    }

    /// POSTs `fields` as application/x-www-form-urlencoded.
    public func postForm(_ url: String, fields: [(String, String)]) throws -> Response {
        try send(url, body: Self.form(fields), contentType: "application/x-www-form-urlencoded")
    }

    /// POSTs a form to a URL an app set, held to `policy` where it counts: plain http is refused
    /// before anything is sent, and every address the host resolves to now is checked just
    /// before libcurl connects to it (`ccurlshim_request_checked`), so neither a name that
    /// resolves elsewhere since it was saved nor a URL saved before the rules can reach a
    /// refused address. A refusal throws a `Failure` with `refusal` set.
    public func postForm(_ url: String, fields: [(String, String)], policy: OutboundAddressPolicy) throws -> Response {
        try post(url, body: Self.form(fields), headers: [("Content-Type", "application/x-www-form-urlencoded")], policy: policy)
    }

    /// POSTs `body` with `headers` to a URL an app set, held to `policy` as `postForm` is (plain
    /// http refused first, every address checked at connect); a redirect is never followed.
    public func post(_ url: String, body: String, headers: [(String, String)], policy: OutboundAddressPolicy) throws -> Response {
        let scheme = url.split(separator: ":", maxSplits: 1).first?.lowercased()
        guard policy.allowInsecure || scheme == "https" else {
            throw Failure(description: "an app's URL must be https", refusal: "plain http")
        }
        for (name, value) in headers where (name + value).contains(where: { $0 == "\r" || $0 == "\n" }) {
            throw Failure(description: "\(url): header \(name) holds a line break")
        }
        let check: ccurlshim_address_check? = policy.allowPrivate ? nil : { address, length in
            guard let address else { return 0 }
            return OutboundAddressPolicy.refusal(of: Array(UnsafeBufferPointer(start: address, count: length))) == nil ? 1 : 0
        }
        var response = ccurlshim_response()
        let lines = headers.map { "\($0.0): \($0.1)" }.joined(separator: "\n")
        // A URL an app set waits on that app's host: the worker's slot is free meanwhile
        // (`WorkerSlots`), so one app's slow API does not hold the others' commands.
        let code = WorkerSlots.waitingOutside {
            body.withCString { pointer in
                ccurlshim_request_checked(url, pointer, body.utf8.count, lines,
                                          timeoutMilliseconds, check, policy.allowInsecure ? 0 : 1, &response)
            }
        }
        let refused = withUnsafeBytes(of: response.refused_address) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        if code != 0, !refused.isEmpty {
            ccurlshim_free_response(&response)
            let reason = OutboundAddressPolicy.literalAddress(refused).flatMap(OutboundAddressPolicy.refusal(of:))
            let refusal = reason.map { "\(refused) (\($0.rawValue))" } ?? refused
            throw Failure(description: "not a public address: \(refusal)", refusal: refusal)
        }
        return try answer(url, code: code, &response)
    }

    private static func form(_ fields: [(String, String)]) -> String {
        fields.map { escape($0.0) + "=" + escape($0.1) }.joined(separator: "&")
    }

    /// POSTs `body` with the given headers; `http2Only` insists on HTTP/2 over TLS (APNs), and
    /// `caFile` trusts that CA bundle instead of the system's (stand-ins in tests).
    public func post(_ url: String, body: String, headers: [(String, String)], http2Only: Bool = false,
                     caFile: String? = nil) throws -> Response {
        for (name, value) in headers where (name + value).contains(where: { $0 == "\r" || $0 == "\n" }) {
            throw Failure(description: "\(url): header \(name) holds a line break")
        }
        let lines = headers.map { "\($0.0): \($0.1)" }.joined(separator: "\n")
        var response = ccurlshim_response()
        let code = body.withCString { pointer in
            ccurlshim_request_with(url, pointer, body.utf8.count, lines, http2Only ? 1 : 0, caFile, timeoutMilliseconds,
                                   &response)
        }
        return try answer(url, code: code, &response)
    }

    private func answer(_ url: String, code: Int32, _ response: inout ccurlshim_response) throws -> Response {
        defer { ccurlshim_free_response(&response) }
        guard code == 0 else {
            let message = withUnsafeBytes(of: response.error) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            throw Failure(description: "\(url): \(message)")
        }
        let data = response.body.map { Data(bytes: $0, count: response.body_length) } ?? Data()
        return Response(status: response.status, body: data, cacheControl: response.cache_control.map { String(cString: $0) },
                        httpVersion: response.http_version)
    }

    private func send(_ url: String, body: String?, contentType: String?) throws -> Response {
        var response = ccurlshim_response()
        let code: Int32
        if let body {
            code = body.withCString { pointer in
                ccurlshim_request(url, pointer, body.utf8.count, contentType, timeoutMilliseconds, &response)
            }
        } else {
            code = ccurlshim_request(url, nil, 0, nil, timeoutMilliseconds, &response)
        }
        defer { ccurlshim_free_response(&response) }
        guard code == 0 else {
            let message = withUnsafeBytes(of: response.error) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            throw Failure(description: "\(url): \(message)")
        }
        let data = response.body.map { Data(bytes: $0, count: response.body_length) } ?? Data()
        return Response(status: response.status, body: data, cacheControl: response.cache_control.map { String(cString: $0) })
    }

    private static func escape(_ value: String) -> String {
        guard let escaped = ccurlshim_escape(value) else { return "" }
        defer { ccurlshim_free(escaped) }
        return String(cString: escaped)
    }
}
