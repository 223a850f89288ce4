import Foundation

/// Verifies access tokens with the app's public keys, cached per app for a minute and
/// reloaded at once (at most every 5 seconds) when a token names a key not yet seen, so a
/// rotated key is accepted without waiting for the cache to expire. The gateway checks every
/// bearer token with it, and the token and revocation workers check again the token a command
/// acts on (`CallerAuthority`).
public final class TokenVerifier: Sendable {
    private struct Keys: Sendable {
        let byKid: [String: TokenSigningKey]
        let loaded: Date
        /// At most the app's JWKS cache period: like any backend's cache, this one must be
        /// fresh by the time a rotation's next key (published that long before) signs.
        let lifetime: TimeInterval
    }

    private let store: AppStore
    /// Session tokens (`st_…`) of the profiles that have them, checked in the store each time.
    private let sessionTokens: SessionTokenStore
    private let cache = Locked<[String: Keys]>([:])
    /// Tokens already verified, by their exact text: a client sends one access token with many
    /// requests, and the RSA check and JSON decoding were a quarter of GET /v1/me's CPU. Only
    /// the signature check is skipped; `exp`, the app and the key are checked on every request,
    /// so a token stops passing within a minute (the key cache's life) of its key's retirement.
    private struct Verified: Sendable {
        let claims: AccessTokenClaims
        let kid: String
    }
    private let verified = Locked<[String: Verified]>([:])
    private static let verifiedLimit = 50_000

    /// How long an app's public keys are used before they are read again (a key retired in
    /// the store stops verifying within this).
    private let keyCacheSeconds: TimeInterval

    private let sessionTokensReadProfile: Bool
    /// What the gateway does with a session token whose session went idle (ends it).
    private let idleSessionFound: (@Sendable (_ claims: AccessTokenClaims, _ token: String) -> Void)?

    /// `sessionTokensReadProfile`: session tokens of disabled users are refused and their claims
    /// say whether the user is a guest (the gateway, which reads the `user_profiles` view); and
    /// session tokens' idle timeout is enforced: an idle session's token is refused (401
    /// `auth/invalid-token`, as for any ended session) and handed to `idleSessionFound`, a live
    /// one is marked seen (at most once a minute).
    public init(store: AppStore, keyCacheSeconds: TimeInterval = 60, sessionTokensReadProfile: Bool = false,
                idleSessionFound: (@Sendable (_ claims: AccessTokenClaims, _ token: String) -> Void)? = nil) {
        self.store = store
        self.sessionTokensReadProfile = sessionTokensReadProfile
        self.idleSessionFound = idleSessionFound
        sessionTokens = SessionTokenStore(pool: store.pool)
        self.keyCacheSeconds = keyCacheSeconds
    }

    /// The claims of a valid bearer token for `app`, or the error to answer with.
    public func verify(authorization: String?, app: AppRecord) throws -> AccessTokenClaims {
        guard let authorization, authorization.hasPrefix("Bearer ") else { throw ServiceError.invalidToken }
        let token = String(authorization.utf8.dropFirst(7).drop { $0 == 32 }) ?? ""
        guard !token.isEmpty, token.utf8.count < 8192 else { throw ServiceError.invalidToken }
        if SessionToken.isSessionToken(token) { return try verifySessionToken(token, app: app) }
        let now = Timestamp.nowSeconds()
        let keys = try keys(appId: app.id)
        if let known = verified.withLock({ $0[token] }), known.claims.aud == app.id, known.claims.iss == app.issuer {
            if keys.byKid[known.kid] != nil {
                guard known.claims.exp > now else { throw ServiceError.tokenExpired }
                return known.claims
            }
            // Its key is no longer published (retired): verified afresh, which now fails.
            verified.withLock { _ = $0.removeValue(forKey: token) }
        }
        do {
            var usedKid = ""
            let claims = try JWT.verify(token, issuer: app.issuer, audience: app.id, now: now) { kid in
                usedKid = kid
                return keys.byKid[kid] ?? (try? self.reload(appId: app.id, ifOlderThan: 5))?.byKid[kid]
            }
            verified.withLock { verified in
                if verified.count >= Self.verifiedLimit { verified.removeAll(keepingCapacity: true) }
                verified[token] = Verified(claims: claims, kid: usedKid)
            }
            return claims
        } catch .expired {
            throw ServiceError.tokenExpired
        } catch {
            throw ServiceError.invalidToken
        }
    }

    private func verifySessionToken(_ token: String, app: AppRecord) throws -> AccessTokenClaims {
        guard let found = try sessionTokens.find(token: token, app: app, readsProfile: sessionTokensReadProfile) else {
            throw ServiceError.invalidToken
        }
        if found.idle {
            idleSessionFound?(found.claims, token)
            throw ServiceError.invalidToken
        }
        if found.seenLongAgo {
            // A failed mark only delays the next one: the request itself is answered.
            do { try sessionTokens.markSeen(appId: app.id, sessionId: found.claims.sid) } catch {
                Log.warning("session token not marked seen", ["app_id": app.id, "error": String(describing: error)])
            }
        }
        return found.claims
    }

    private func keys(appId: String) throws -> Keys {
        if let cached = cache.withLock({ $0[appId] }), Date().timeIntervalSince(cached.loaded) < cached.lifetime {
            return cached
        }
        return try reload(appId: appId, ifOlderThan: 0)
    }

    private func reload(appId: String, ifOlderThan age: TimeInterval) throws -> Keys {
        if let cached = cache.withLock({ $0[appId] }), Date().timeIntervalSince(cached.loaded) < age {
            return cached
        }
        var byKid: [String: TokenSigningKey] = [:]
        // Next, current and previous keys: a token is checked under its key's own algorithm.
        for key in try store.signingKeys.published(appId: appId) {
            byKid[key.kid] = try TokenSigningKey.fromPEM(key.publicPEM, algorithm: key.algorithm)
        }
        let period = TimeInterval(try store.signingKeys.jwksCacheSeconds(appId: appId) ?? Int(keyCacheSeconds))
        let keys = Keys(byKid: byKid, loaded: Date(), lifetime: min(keyCacheSeconds, period))
        cache.withLock { $0[appId] = keys }
        return keys
    }
}
