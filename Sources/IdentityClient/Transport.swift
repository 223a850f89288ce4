import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One HTTP exchange with the service: JSON in, `{"data": …}` or problem+json out.
struct Transport: Sendable {
    let baseURL: URL
    let appKey: String
    let session: URLSession
    let userAgent: String?

    struct Answer: Sendable {
        let status: Int
        let body: Data
    }

    /// Sends the request; a status outside 2xx is thrown as ``IdentityError``. Transport
    /// failures (no network, timeout) are thrown as they come (`URLError`).
    /// `Locale.preferredLanguages` that are well-formed BCP 47 tags (a POSIX `C` locale is not).
    static var deviceLanguages: [String] {
        Locale.preferredLanguages.filter { tag in
            let parts = tag.split(separator: "-", omittingEmptySubsequences: false)
            return tag.utf8.count <= 35 && (2...3).contains(parts[0].count) && parts[0].allSatisfy { $0.isASCII && $0.isLetter }
                && parts.dropFirst().allSatisfy { (1...8).contains($0.count) && $0.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) } }
        }
    }

    func send(_ method: String, _ path: String, body: JSONObject? = nil, bearer: String? = nil) async throws -> Answer {
        var request = URLRequest(url: baseURL.appendingPathComponent(path))
        request.httpMethod = method
        request.setValue(appKey, forHTTPHeaderField: "X-App-Key")
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        if let userAgent { request.setValue(userAgent, forHTTPHeaderField: "User-Agent") }
        // The device's languages: what a code's mail or SMS is written in for a user with no
        // stored locale (Apple's URLSession adds it itself; FoundationNetworking does not).
        if !Self.deviceLanguages.isEmpty {
            request.setValue(Self.deviceLanguages.prefix(4).enumerated().map { index, tag in
                index == 0 ? tag : tag + ";q=0.\(9 - index)"
            }.joined(separator: ", "), forHTTPHeaderField: "Accept-Language")
        }
        if let bearer { request.setValue("Bearer \(bearer)", forHTTPHeaderField: "Authorization") }
        if let body {
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = try JSONEncoder().encode(body)
        }
        let (data, response) = try await session.data(for: request)
        guard let http = response as? HTTPURLResponse else {
            throw IdentityClientError.invalidResponse(status: 0, body: "")
        }
        guard (200..<300).contains(http.statusCode) else {
            throw IdentityError.from(status: http.statusCode, body: data, headers: http.allHeaderFields)
        }
        return Answer(status: http.statusCode, body: data)
    }

    /// A declared request, with the app key alone (no user's token).
    func send(_ request: APIRequest) async throws -> Answer {
        try await send(request.method, request.path, body: request.body)
    }

    /// No answer came (connection lost, timeout, no network): `URLError`, or on Linux an
    /// `NSError` of `NSURLErrorDomain` that is not always bridged to it.
    static func isTransportFailure(_ error: Error) -> Bool {
        error is URLError || (error as NSError).domain == NSURLErrorDomain
    }

    /// The `data` member of a success answer, decoded.
    static func data<T: Decodable>(_ type: T.Type, of answer: Answer) throws -> T {
        do {
            return try Timestamps.decoder().decode(DataEnvelope<T>.self, from: answer.body).data
        } catch {
            throw IdentityClientError.invalidResponse(status: answer.status,
                                                      body: String(decoding: answer.body.prefix(300), as: UTF8.self))
        }
    }

    /// The `data` member as plain JSON (for the WebAuthn options handed on to the platform as they are).
    static func rawData(of answer: Answer) throws -> [String: Any] {
        guard let object = try? JSONSerialization.jsonObject(with: answer.body) as? [String: Any],
              let data = object["data"] as? [String: Any] else {
            throw IdentityClientError.invalidResponse(status: answer.status,
                                                      body: String(decoding: answer.body.prefix(300), as: UTF8.self))
        }
        return data
    }
}

/// `{"data": …}`, the shape of every success answer.
struct DataEnvelope<T: Decodable>: Decodable {
    let data: T
}
