import Foundation
import IdentityKit

/// Apple Push Notification service with token-based authentication: each request carries a
/// provider token (an ES256 JWT from the app's `.p8`: `kid` the key id, `iss` the team id,
/// `iat`), over HTTP/2 (APNs speaks nothing else), to `<base>/3/device/<token>`.
public final class APNsClient: Sendable {
    public struct Credentials: Sendable {
        public let teamId: String
        public let keyId: String
        public let topic: String
        public let key: ECSigningKey
        public init(teamId: String, keyId: String, topic: String, key: ECSigningKey) {
            self.teamId = teamId
            self.keyId = keyId
            self.topic = topic
            self.key = key
        }
    }

    public enum Outcome: Sendable, Equatable {
        case sent
        /// 410: the token is no longer valid for the topic; the device must be unregistered.
        case unregistered
        /// A refusal that sending again cannot fix (400 BadDeviceToken, 413…).
        case refused(String)
        /// Worth another try later (429, 5xx, the network, an expired provider token).
        case transient(String)
    }

    let baseURL: String
    let http: OutboundHTTP
    let caFile: String?
    /// Provider tokens by app: Apple refuses one refreshed more often than every 20 minutes
    /// (429 TooManyProviderTokenUpdates) and one older than an hour, so each is used 40 minutes.
    private let tokens = Locked([String: (token: String, issuedAt: Int64)]())

    public init(baseURL: String, http: OutboundHTTP, caFile: String?) {
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        self.http = http
        self.caFile = caFile
    }

    public static func providerToken(_ credentials: Credentials, now: Int64 = Timestamp.nowSeconds()) throws -> String {
        try JWT.signES256(.object(["iss": .string(credentials.teamId), "iat": .number(Double(now))]),
                          kid: credentials.keyId, key: credentials.key)
    }

    private func token(appId: String, _ credentials: Credentials) throws -> String {
        let now = Timestamp.nowSeconds()
        let cacheKey = appId + "/" + credentials.keyId
        if let cached = tokens.withLock({ $0[cacheKey] }), now - cached.issuedAt < 40 * 60 { return cached.token }
        let fresh = try Self.providerToken(credentials, now: now)
        tokens.withLock { $0[cacheKey] = (fresh, now) }
        return fresh
    }

    public func send(appId: String, deviceToken: String, title: String, body: String,
                     credentials: Credentials) -> Outcome {
        guard !deviceToken.isEmpty, deviceToken.utf8.count <= 200,
              deviceToken.allSatisfy({ $0.isASCII && ($0.isHexDigit || $0.isLetter || $0.isNumber) }) else {
            return .refused("BadDeviceToken (not hexadecimal)")
        }
        let payload: JSONValue = .object(["aps": .object([
            "alert": .object(["title": .string(title), "body": .string(body)]), "sound": .string("default"),
        ])])
        do {
            let response = try http.post(baseURL + "/3/device/" + deviceToken, body: payload.serialized, headers: [
                ("authorization", "bearer " + (try token(appId: appId, credentials))),
                ("apns-topic", credentials.topic), ("apns-push-type", "alert"), ("apns-priority", "10"),
                ("content-type", "application/json"),
            ], http2Only: true, caFile: caFile)
            let reason = Self.reason(response.body)
            switch response.status {
            case 200: return .sent
            case 410: return .unregistered
            case 403 where reason == "ExpiredProviderToken" || reason == "InvalidProviderToken":
                // A new token for the next try (one refused now may be cached from before a key change).
                tokens.withLock { $0[appId + "/" + credentials.keyId] = nil }
                return .transient("APNs answered 403 \(reason)")
            case 429, 500...599: return .transient("APNs answered \(response.status) \(reason)")
            default: return .refused("APNs answered \(response.status) \(reason)")
            }
        } catch {
            return .transient(String(describing: error))
        }
    }

    /// APNs' `reason` when it is the short CamelCase word Apple documents, else `unknown`:
    /// it goes into log lines.
    static func reason(_ body: Data) -> String {
        guard case .string(let word)? = JSONValue.parse(body)?["reason"], (1...60).contains(word.count),
              word.allSatisfy({ $0.isASCII && $0.isLetter }) else { return "unknown" }
        return word
    }
}
