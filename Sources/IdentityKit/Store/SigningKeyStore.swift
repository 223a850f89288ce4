import Foundation

/// Apps' access-token signing keys and their lifecycle: next → current → previous → retired.
///
/// A rotation adds a `next` key that is published in the JWKS at once and starts signing one
/// JWKS cache period later (`apps.jwks_cache_seconds`, also the JWKS `max-age`), so a backend
/// holding a cached JWKS already knows it; the key it replaces stays published as `previous`
/// until every token it signed has expired (its last token's `exp` plus leeway). States follow
/// from the stored times (the `signing_key_states` view), so nothing has to flip at the moment.
///
/// Here: the public halves and states, which the gateway publishes (JWKS) and verifies with.
/// Unsealing private keys and rotating (which seals a new one) are IdentityCredentials' part
/// (`SigningKeyStore+Private.swift`), for the token worker and identityctl.
public struct SigningKeyStore: Sendable {
    package let pool: PGPool

    public init(pool: PGPool) { self.pool = pool }

    /// Seconds added to a replaced key's publication beyond its tokens' lifetime: JWT.clockSkew
    /// (clock skew at verifiers) and as much again for a token worker whose clock is behind.
    public static let retirementSlackSeconds = 2 * Int(JWT.clockSkew)

    public struct KeyState: Sendable {
        public let kid: String
        public let algorithm: SigningAlgorithm
        public let publicPEM: String
        public let state: String
        public let activatesAt: Date
        public let retiresAt: Date?
    }

    /// Every key of the app with its state now, newest first (retired ones included).
    public func states(appId: String) throws -> [KeyState] {
        try pool.withConnection { connection in
            try connection.query("""
                SELECT kid, alg, public_pem, state, extract(epoch FROM activates_at)::float8 AS activates,
                       extract(epoch FROM retires_at)::float8 AS retires
                FROM signing_key_states WHERE app_id = $1 ORDER BY activates_at DESC
                """, [appId]).map(Self.keyState)
        }
    }

    /// The keys that verify the app's tokens: next, current and previous.
    public func published(appId: String) throws -> [KeyState] {
        try pool.withConnection { connection in
            try connection.query("""
                SELECT kid, alg, public_pem, state, extract(epoch FROM activates_at)::float8 AS activates,
                       extract(epoch FROM retires_at)::float8 AS retires
                FROM signing_key_states WHERE app_id = $1 AND state <> 'retired' ORDER BY activates_at DESC
                """, [appId]).map(Self.keyState)
        }
    }

    /// How long the app's JWKS may be cached (its `max-age`), nil for an unknown app.
    public func jwksCacheSeconds(appId: String) throws -> Int? {
        try pool.withConnection { connection in
            try connection.query("SELECT jwks_cache_seconds FROM apps WHERE id = $1", [appId]).first.map { try $0.int("jwks_cache_seconds") }
        }
    }

    public func setJWKSCacheSeconds(appId: String, seconds: Int) throws {
        try pool.withConnection { connection in
            _ = try connection.query("UPDATE apps SET jwks_cache_seconds = $2 WHERE id = $1", [appId, String(seconds)])
        }
    }

    package static func keyState(_ row: PGRow) throws -> KeyState {
        guard let algorithm = SigningAlgorithm(rawValue: try row.string("alg")) else {
            throw StoreError.failed(sqlState: "", message: "unknown signing algorithm")
        }
        let retires = try row.optionalString("retires").flatMap(Double.init)
        return KeyState(kid: try row.string("kid"), algorithm: algorithm, publicPEM: try row.string("public_pem"),
                        state: try row.string("state"),
                        activatesAt: Date(timeIntervalSince1970: try row.double("activates")),
                        retiresAt: retires.map { Date(timeIntervalSince1970: $0) })
    }
}
