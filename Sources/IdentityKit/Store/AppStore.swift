import Foundation

/// Apps, as the gateway and the workers read and set them. Creating an app (which writes its
/// secret key's hash and its first signing key, sealed) is IdentityCredentials' part
/// (`AppStore+Create.swift`); `SigningKeyStore` publishes keys, and IdentityCredentials unseals
/// and rotates them.
public struct AppStore: Sendable {
    package let pool: PGPool

    public init(pool: PGPool) { self.pool = pool }

    /// The apps' signing keys, on the same pool.
    public var signingKeys: SigningKeyStore { SigningKeyStore(pool: pool) }

    public func find(appKey: String) throws -> AppRecord? {
        try pool.withConnection { connection in
            try connection.query("SELECT id, name, app_key, issuer, access_token_ttl, session_end_proof FROM apps WHERE app_key = $1",
                                 [appKey]).first.map(Self.app)
        }
    }

    /// Every app, oldest first (ids are time-ordered).
    public func list() throws -> [AppRecord] {
        try pool.withConnection { connection in
            try connection.query("SELECT id, name, app_key, issuer, access_token_ttl, session_end_proof FROM apps ORDER BY id").map(Self.app)
        }
    }

    public func find(id: String) throws -> AppRecord? {
        try pool.withConnection { connection in
            try connection.query("SELECT id, name, app_key, issuer, access_token_ttl, session_end_proof FROM apps WHERE id = $1",
                                 [id]).first.map(Self.app)
        }
    }

    /// Changes the lifetime of the app's access tokens (5 minutes to 24 hours).
    /// A longer lifetime also pushes back the retirement of a key being replaced (it may still
    /// sign until its successor activates, now with the longer lifetime), so none of its
    /// tokens outlives its publication.
    public func setAccessTokenTTL(appId: String, seconds: Int) throws -> AppRecord? {
        try pool.transaction { connection in
            let previous = try connection.query("SELECT access_token_ttl FROM apps WHERE id = $1 FOR UPDATE", [appId])
                .first.map { try $0.int("access_token_ttl") }
            let app = try connection.query("""
                UPDATE apps SET access_token_ttl = $2 WHERE id = $1
                RETURNING id, name, app_key, issuer, access_token_ttl, session_end_proof
                """, [appId, String(seconds)]).first.map(Self.app)
            if let previous, seconds > previous {
                try connection.query("""
                    UPDATE signing_keys SET retires_at = retires_at + make_interval(secs => $2::int)
                    WHERE app_id = $1 AND retires_at > now() AND status <> 'retired'
                    """, [appId, String(seconds - previous)])
            }
            return app
        }
    }

    /// The absolute session lifetime of the app, in seconds.
    public func sessionLifetime(appId: String) throws -> Int? {
        try pool.withConnection { connection in
            try connection.query("SELECT session_lifetime FROM apps WHERE id = $1", [appId]).first.map { try $0.int("session_lifetime") }
        }
    }

    /// Sets the absolute session lifetime (1 hour to 10 years); refreshes apply it at once.
    public func setSessionLifetime(appId: String, seconds: Int) throws {
        try pool.withConnection { connection in
            _ = try connection.query("UPDATE apps SET session_lifetime = $2 WHERE id = $1", [appId, String(seconds)])
        }
    }

    /// How long a session-token session (`session-object`, `single-token`) may go unused, in
    /// seconds.
    public func sessionIdleTimeout(appId: String) throws -> Int? {
        try pool.withConnection { connection in
            try connection.query("SELECT session_idle_timeout FROM apps WHERE id = $1", [appId]).first
                .map { try $0.int("session_idle_timeout") }
        }
    }

    /// Sets the idle timeout (5 minutes to 365 days); the gateway applies it on the next request
    /// of each such session, to its last use so far.
    public func setSessionIdleTimeout(appId: String, seconds: Int) throws {
        try pool.withConnection { connection in
            _ = try connection.query("UPDATE apps SET session_idle_timeout = $2 WHERE id = $1", [appId, String(seconds)])
        }
    }

    /// What ending another session or all of them takes: `none` or `fresh` (a sign-in within
    /// the step-up window).
    public func sessionEndProof(appId: String) throws -> String? {
        try pool.withConnection { connection in
            try connection.query("SELECT session_end_proof FROM apps WHERE id = $1", [appId]).first?.string("session_end_proof")
        }
    }

    public func setSessionEndProof(appId: String, _ proof: String) throws {
        try pool.withConnection { connection in
            _ = try connection.query("UPDATE apps SET session_end_proof = $2 WHERE id = $1", [appId, proof])
        }
    }

    /// The app's rate-limit overrides by limit name (`{"count", "window"}` or `"off"`).
    public func rateLimitOverrides(appId: String) throws -> [String: JSONValue] {
        let text = try pool.withConnection { connection in
            try connection.query("SELECT rate_limits::text AS limits FROM apps WHERE id = $1", [appId]).first?.string("limits")
        }
        guard let text, case .object(let overrides)? = JSONValue.parse(Data(text.utf8)) else { return [:] }
        return overrides
    }

    /// Sets (or, with nil, removes) one override; the store function that counts reads it on
    /// the next request, on every replica.
    public func setRateLimitOverride(appId: String, name: String, _ override: RateLimitOverride?) throws {
        try pool.withConnection { connection in
            if let override {
                _ = try connection.query("""
                    UPDATE apps SET rate_limits = rate_limits || jsonb_build_object($2::text, $3::jsonb) WHERE id = $1
                    """, [appId, name, override.json.serialized])
            } else {
                _ = try connection.query("UPDATE apps SET rate_limits = rate_limits - $2::text WHERE id = $1", [appId, name])
            }
        }
    }

    /// The metadata the app's new users start with (`{}` when none was set).
    public func defaultMetadata(appId: String) throws -> JSONValue {
        try pool.withConnection { connection in
            let text = try connection.query("SELECT default_metadata::text AS metadata FROM apps WHERE id = $1", [appId])
                .first.map { try $0.string("metadata") } ?? "{}"
            return JSONValue.parse(Data(text.utf8)) ?? .object([:])
        }
    }

    public func setDefaultMetadata(appId: String, _ metadata: JSONValue) throws {
        try pool.withConnection { connection in
            _ = try connection.query("UPDATE apps SET default_metadata = $2::jsonb WHERE id = $1", [appId, metadata.serialized])
        }
    }

    /// Failed sign-ins of one account or IP within 15 minutes that make an audit row
    /// (`SignInFailureAudit`); 5 unless the app set it.
    public func failedSignInAuditThreshold(appId: String) throws -> Int {
        try pool.withConnection { connection in
            try connection.query("SELECT failed_sign_in_audit_threshold FROM apps WHERE id = $1", [appId])
                .first.map { try $0.int("failed_sign_in_audit_threshold") } ?? 5
        }
    }

    public func setFailedSignInAuditThreshold(appId: String, _ threshold: Int) throws {
        try pool.withConnection { connection in
            _ = try connection.query("UPDATE apps SET failed_sign_in_audit_threshold = $2 WHERE id = $1",
                                     [appId, String(threshold)])
        }
    }

    private static func app(_ row: PGRow) throws -> AppRecord {
        try AppRecord(id: row.string("id"), name: row.string("name"), appKey: row.string("app_key"),
                  issuer: row.string("issuer"), accessTokenTTL: row.int("access_token_ttl"),
                  sessionEndNeedsFreshSignIn: row.string("session_end_proof") == "fresh")
    }
}
