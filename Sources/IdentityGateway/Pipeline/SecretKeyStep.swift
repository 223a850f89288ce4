import Foundation
import IdentityKit

/// How a route uses the app's secret key (`Route.secretKey`).
struct SecretKeyUse: Sendable {
    /// The audit log's `action` for each call (`admin.users.disable`); nil: not audited
    /// (introspection and revocation, which backends call per request or per sign-out, act only
    /// on the caller's own tokens).
    let auditAction: String?
    /// An OAuth client's endpoint (RFC 7662 introspection, RFC 7009 revocation): the key also as
    /// HTTP Basic (`client_secret_basic`: the app id and the key, RFC 6749 §2.3.1) or as the form
    /// fields `client_id` and `client_secret` (`client_secret_post`), beside `Bearer`; a refused
    /// client is OAuth's 401 `invalid_client` with `WWW-Authenticate` (`OAuthClientError`).
    let oauthClient: Bool

    static func admin(_ action: String) -> SecretKeyUse { SecretKeyUse(auditAction: action, oauthClient: false) }
    static let oauthClient = SecretKeyUse(auditAction: nil, oauthClient: true)
}

/// Who an admin call comes from: a live secret key of one app. Everything the call touches is
/// of that app (every store query takes `app.id`), so a key of app A can never reach app B.
struct AdminCaller: Sendable {
    let app: AppRecord
    /// The key as presented, however it came (Bearer, Basic or a form), or a console user's
    /// session token: the authority a command sent for the call carries to its worker
    /// (`CallerAuthority`).
    let secretKey: String
    /// The audit log's actor: `secret_key:<key id>`, or `console:<uid>`.
    let actor: String
    /// What the audit row adds of the caller (a console user's `via` and `console_email`).
    var auditDetail: [String: JSONValue] = [:]

    init(app: AppRecord, keyId: String, secretKey: String) {
        self.app = app
        self.secretKey = secretKey
        actor = "secret_key:" + keyId
    }

    init(app: AppRecord, consoleUid: String, email: String, sessionToken: String) {
        self.app = app
        secretKey = sessionToken
        actor = "console:" + consoleUid
        auditDetail = ["via": .string("console"), "console_email": .string(email)]
    }
}

/// The pipeline step of routes declared with `secretKey`: `Authorization: Bearer <secret key>`
/// (or Basic where allowed) resolved to its app, never a user's access token. An `X-App-Key`
/// sent beside it must name the same app. Lookups are remembered for a few seconds, bounded by
/// the key's own end, so a backend calling per request costs no query per call; a key rotated
/// out with no overlap stops on every gateway within `cacheSeconds` (at once on the gateway that
/// rotated it).
final class SecretKeyStep: Sendable {
    private struct Entry: Sendable {
        let owner: SecretKeyStore.Owner?
        let until: Double
    }

    static let cacheSeconds = 5.0
    private let store: SecretKeyStore
    /// By the key's SHA-256 (the cache never holds a key itself).
    private let cache = Locked<[[UInt8]: Entry]>([:])

    init(store: SecretKeyStore) { self.store = store }

    func authenticate(_ request: HTTPRequest, use: SecretKeyUse) throws -> AdminCaller {
        guard let presented = Self.credentials(request, oauthClient: use.oauthClient) else {
            throw ServiceError.invalidSecretKey
        }
        guard let owner = try owner(ofKey: presented.key) else { throw ServiceError.invalidSecretKey }
        // The client id (Basic's or the form's), when given, and X-App-Key, when sent, must both
        // name the key's own app.
        if let clientId = presented.clientId, !clientId.isEmpty, clientId != owner.app.id {
            throw ServiceError.invalidSecretKey
        }
        if let appKey = request.header("x-app-key"), appKey != owner.app.appKey { throw ServiceError.invalidSecretKey }
        return AdminCaller(app: owner.app, keyId: owner.keyId, secretKey: presented.key)
    }

    /// Forgets every remembered key of `appId` (after this gateway rotated its secret key).
    func forget(appId: String) {
        cache.withLock { cache in cache = cache.filter { $0.value.owner?.app.id != appId } }
    }

    private func owner(ofKey key: String) throws -> SecretKeyStore.Owner? {
        let name = Digest.sha256(key)
        let now = Date().timeIntervalSince1970
        if let entry = cache.withLock({ $0[name] }), entry.until > now {
            if let end = entry.owner?.expiresAtMicros, Double(end) / 1_000_000 <= now { return nil }
            return entry.owner
        }
        let owner = try store.owner(ofKey: key)
        var until = now + (owner == nil ? 2 : Self.cacheSeconds)
        if let end = owner?.expiresAtMicros { until = min(until, Double(end) / 1_000_000) }
        cache.withLock { cache in
            if cache.count > 10_000 { cache.removeAll() }
            cache[name] = Entry(owner: owner, until: until)
        }
        return owner
    }

    /// The key (and the client id given with it) from `Authorization`, or, for an OAuth client
    /// without that header, from a form body's `client_secret` and `client_id`. A client uses
    /// one way only (RFC 6749 §2.3): a header and a form secret together are refused. Anything
    /// not shaped like a secret key (a JWT, an app key) is refused without a query.
    static func credentials(_ request: HTTPRequest, oauthClient: Bool) -> (key: String, clientId: String?)? {
        let formSecret = oauthClient ? formCredentials(request) : nil
        guard let header = request.header("authorization") else {
            guard let formSecret, formSecret.key.hasPrefix("sk_"), (4...128).contains(formSecret.key.utf8.count) else {
                return nil
            }
            return formSecret
        }
        guard formSecret == nil else { return nil }
        return credentials(header, basicAllowed: oauthClient)
    }

    /// `client_secret` (and `client_id`) of a form body (`client_secret_post`); nil when the body
    /// is no form or has no `client_secret`.
    static func formCredentials(_ request: HTTPRequest) -> (key: String, clientId: String?)? {
        guard Gateway.mediaType(request.header("content-type")) == "application/x-www-form-urlencoded" else { return nil }
        // A body that names no client_secret, even escaped (no `%`), has none: not parsed.
        guard request.body.withUnsafeBytes({ TextScanning.mayHoldField("client_secret", inForm: $0) }) else { return nil }
        let body = [UInt8](request.body)
        guard let secret = TextScanning.formValue("client_secret", in: body) else { return nil }
        return (secret, TextScanning.formValue("client_id", in: body))
    }

    static func credentials(_ header: String?, basicAllowed: Bool) -> (key: String, clientId: String?)? {
        guard let header else { return nil }
        let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2 else { return nil }
        let scheme = parts[0].lowercased()
        let value = TextScanning.trimmed(parts[1])
        var key = value
        var clientId: String?
        if scheme == "basic", basicAllowed {
            guard let decoded = Data(base64Encoded: value), let text = String(data: decoded, encoding: .utf8),
                  let colon = text.firstIndex(of: ":") else { return nil }
            // RFC 6749 §2.3.1: both parts are form-encoded before Basic.
            clientId = TextScanning.percentDecoded(text[..<colon])
            key = TextScanning.percentDecoded(text[text.index(after: colon)...]) ?? ""
        } else if scheme != "bearer" {
            return nil
        }
        guard key.hasPrefix("sk_"), (4...128).contains(key.utf8.count) else { return nil }
        return (key, clientId)
    }
}
