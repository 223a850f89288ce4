import Foundation
import IdentityKit

/// Firebase Cloud Messaging HTTP v1: an OAuth2 access token from the JWT-bearer grant (an
/// RS256 assertion signed with the service account's key, RFC 7523), kept until shortly before
/// it expires, then `POST <base>/v1/projects/<project>/messages:send`.
public final class FCMClient: Sendable {
    public enum Outcome: Sendable, Equatable {
        case sent
        /// `UNREGISTERED` (404): the app was uninstalled or the token expired.
        case unregistered
        case refused(String)
        case transient(String)
    }

    let baseURL: String
    /// Where the assertion is exchanged; also its `aud`. From the configuration, never from the
    /// service-account file, so an app's settings cannot point the worker at another host.
    let tokenURL: String
    let http: OutboundHTTP
    let caFile: String?
    private let tokens = Locked([String: (token: String, expiresAt: Int64)]())

    public static let scope = "https://www.googleapis.com/auth/firebase.messaging"

    public init(baseURL: String, tokenURL: String, http: OutboundHTTP, caFile: String?) {
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        self.tokenURL = tokenURL
        self.http = http
        self.caFile = caFile
    }

    /// The signed assertion: `iss` the service account, `scope` FCM, `aud` the token URL, one hour.
    public static func assertion(_ account: FCMServiceAccount, audience: String,
                                 now: Int64 = Timestamp.nowSeconds()) throws -> String {
        let key = try RSAKey.fromPEM(account.privateKeyPEM)
        var header: [String: JSONValue] = ["alg": .string("RS256"), "typ": .string("JWT")]
        if let kid = account.privateKeyId { header["kid"] = .string(kid) }
        let claims: JSONValue = .object([
            "iss": .string(account.clientEmail), "scope": .string(scope), "aud": .string(audience),
            "iat": .number(Double(now)), "exp": .number(Double(now + 3600)),
        ])
        let input = Base64URL.encode(Array(JSONValue.object(header).serialized.utf8)) + "."
            + Base64URL.encode(Array(claims.serialized.utf8))
        return input + "." + Base64URL.encode(try key.signRS256(Array(input.utf8)))
    }

    func accessToken(appId: String, _ account: FCMServiceAccount) throws -> String {
        let now = Timestamp.nowSeconds()
        let cacheKey = appId + "/" + account.clientEmail
        if let cached = tokens.withLock({ $0[cacheKey] }), cached.expiresAt > now { return cached.token }
        let response = try http.post(tokenURL, body: [
            ("grant_type", "urn:ietf:params:oauth:grant-type:jwt-bearer"),
            ("assertion", try Self.assertion(account, audience: tokenURL, now: now)),
        ].map { "\($0.0)=\(Self.formEscape($0.1))" }.joined(separator: "&"),
            headers: [("content-type", "application/x-www-form-urlencoded")], caFile: caFile)
        let body = JSONValue.parse(response.body)
        guard response.status == 200, case .string(let token)? = body?["access_token"], !token.isEmpty else {
            throw OutboundHTTP.Failure(description: "FCM token endpoint answered \(response.status)")
        }
        var lifetime: Int64 = 3600
        if case .number(let seconds)? = body?["expires_in"] { lifetime = Int64(seconds) }
        // Renewed a minute early, so no request goes out with a token that expires on the way.
        tokens.withLock { $0[cacheKey] = (token, now + max(0, lifetime - 60)) }
        return token
    }

    public func send(appId: String, deviceToken: String, title: String, body: String,
                     account: FCMServiceAccount) -> Outcome {
        let message: JSONValue = .object(["message": .object([
            "token": .string(deviceToken),
            "notification": .object(["title": .string(title), "body": .string(body)]),
        ])])
        do {
            let token = try accessToken(appId: appId, account)
            let project = account.projectId.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(["-"])) ?? ""
            let response = try http.post(baseURL + "/v1/projects/" + project + "/messages:send", body: message.serialized,
                                         headers: [("authorization", "Bearer " + token),
                                                   ("content-type", "application/json")], caFile: caFile)
            let code = Self.errorCode(response.body)
            switch response.status {
            case 200: return .sent
            case _ where code == "UNREGISTERED": return .unregistered
            case 401:
                tokens.withLock { $0[appId + "/" + account.clientEmail] = nil }
                return .transient("FCM answered 401")
            case 429, 500...599: return .transient("FCM answered \(response.status) \(code)")
            default: return .refused("FCM answered \(response.status) \(code)")
            }
        } catch {
            return .transient(String(describing: error))
        }
    }

    /// The FCM error code (`details[].errorCode`, else `status`) when it is a short
    /// UPPER_SNAKE word, else `unknown`: it goes into log lines.
    static func errorCode(_ body: Data) -> String {
        guard case .object(let error)? = JSONValue.parse(body)?["error"] else { return "unknown" }
        var word: String?
        if case .array(let details)? = error["details"] {
            for detail in details { if case .string(let code)? = detail["errorCode"] { word = code } }
        }
        if word == nil, case .string(let status)? = error["status"] { word = status }
        guard let word, (1...40).contains(word.count), word.allSatisfy({ $0.isASCII && ($0.isUppercase || $0 == "_") })
        else { return "unknown" }
        return word
    }

    static func formEscape(_ value: String) -> String {
        value.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(["-", ".", "_", "~"])) ?? ""
    }
}
