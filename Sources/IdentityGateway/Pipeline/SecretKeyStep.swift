import Foundation
import IdentityKit

/// How a route uses the app's secret key (`Route.secretKey`).
struct SecretKeyUse: Sendable {
    /// The audit log's `action` for each call (`admin.users.disable`); nil: not audited
    /// (introspection, which backends call on every request, is a read of the caller's own tokens).
    let auditAction: String?
    /// Also as HTTP Basic (`client_id:client_secret`, RFC 7662 §2.1), beside `Bearer`.
    let basicAllowed: Bool

    static func admin(_ action: String) -> SecretKeyUse { SecretKeyUse(auditAction: action, basicAllowed: false) }
    static let introspection = SecretKeyUse(auditAction: nil, basicAllowed: true)
}

/// Who an admin call comes from: a live secret key of one app. Everything the call touches is
/// of that app (every store query takes `app.id`), so a key of app A can never reach app B.
struct AdminCaller: Sendable {
    let app: AppRecord
    let keyId: String

    /// The audit log's actor.
    var actor: String { "secret_key:" + keyId }
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
    private let cache = Locked<[String: Entry]>([:])

    init(store: SecretKeyStore) { self.store = store }

    func authenticate(_ request: HTTPRequest, use: SecretKeyUse) throws -> AdminCaller {
        guard let presented = Self.credentials(request.header("authorization"), basicAllowed: use.basicAllowed) else {
            throw ServiceError.invalidSecretKey
        }
        guard let owner = try owner(ofKey: presented.key) else { throw ServiceError.invalidSecretKey }
        // Basic's client id, when given, and X-App-Key, when sent, must both name the key's own app.
        if let clientId = presented.clientId, !clientId.isEmpty, clientId != owner.app.id {
            throw ServiceError.invalidSecretKey
        }
        if let appKey = request.header("x-app-key"), appKey != owner.app.appKey { throw ServiceError.invalidSecretKey }
        return AdminCaller(app: owner.app, keyId: owner.keyId)
    }

    /// Forgets every remembered key of `appId` (after this gateway rotated its secret key).
    func forget(appId: String) {
        cache.withLock { cache in cache = cache.filter { $0.value.owner?.app.id != appId } }
    }

    private func owner(ofKey key: String) throws -> SecretKeyStore.Owner? {
        let name = Hex.encode(Digest.sha256(key))  // the cache never holds a key itself
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

    /// The key (and Basic's client id) from `Authorization`. Anything not shaped like a secret
    /// key (a JWT, an app key) is refused without a query.
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
