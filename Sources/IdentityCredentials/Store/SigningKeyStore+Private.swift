import Foundation
import IdentityKit

/// The private halves of the apps' signing keys (`signing_keys.private_key_enc`): unsealed for
/// the token worker, which signs with them, and made and sealed by a rotation (the token
/// worker's admin command, identityctl).
extension SigningKeyStore {
    /// A private key that signs from `activatesAt` on (token worker only).
    public struct SigningCandidate: Sendable {
        public let kid: String
        public let key: TokenSigningKey
        public let activatesAt: Date
    }

    /// The current key and a next one, unsealed with the master key: the token worker keeps
    /// both and signs with the latest whose time has come, so it switches at the activation
    /// instant without reading the store again.
    public func signingCandidates(appId: String, masterKey: [UInt8]) throws -> [SigningCandidate] {
        let rows = try pool.withConnection { connection in
            try connection.query("""
                SELECT kid, alg, private_key_enc, extract(epoch FROM activates_at)::float8 AS activates
                FROM signing_keys WHERE app_id = $1 AND status IN ('current', 'next')
                  AND (retires_at IS NULL OR retires_at > now())
                ORDER BY activates_at
                """, [appId])
        }
        return try rows.map { row in
            let kid = try row.string("kid")
            guard let algorithm = SigningAlgorithm(rawValue: try row.string("alg")) else {
                throw StoreError.failed(sqlState: "", message: "unknown signing algorithm")
            }
            let pem = try SecretSealer(masterKey: masterKey, purpose: .signingKeySeal)
                .open(row.bytes("private_key_enc"), associatedData: SigningKeyAAD.make(appId: appId, kid: kid))
            return SigningCandidate(kid: kid, key: try TokenSigningKey.fromPEM(String(decoding: pem, as: UTF8.self), algorithm: algorithm),
                                    activatesAt: Date(timeIntervalSince1970: try row.double("activates")))
        }
    }

    public enum RotationError: Error, Sendable, Equatable {
        case unknownApp
        /// A rotation's next key has not started signing yet: rotating again would publish a
        /// key and drop the pending one before any cache could know the first.
        case pending(kid: String, activatesAt: Date)
    }

    public struct Rotation: Sendable {
        public let kid: String
        public let algorithm: SigningAlgorithm
        public let activatesAt: Date
        /// The key it replaces, and when that one leaves the JWKS.
        public let replacedKid: String?
        public let replacedRetiresAt: Date?
    }

    /// Adds a next key of `algorithm`, sealed under the signing-key sub-key of the master key, and schedules the current
    /// key's retirement. One rotation at a time per app (an advisory lock).
    public func rotate(appId: String, algorithm: SigningAlgorithm, masterKey: [UInt8]) throws -> Rotation {
        let key = try TokenSigningKey.generate(algorithm)
        let kid = Identifiers.prefixed("key")
        let sealed = try SecretSealer(masterKey: masterKey, purpose: .signingKeySeal)
            .seal(Array(try key.privateKeyPEM().utf8), associatedData: SigningKeyAAD.make(appId: appId, kid: kid))
        let publicPEM = try key.publicKeyPEM()
        return try pool.transaction { connection in
            _ = try connection.query("SELECT pg_advisory_xact_lock(hashtext('signing_keys:' || $1))", [appId])
            guard let app = try connection.query("SELECT access_token_ttl, jwks_cache_seconds FROM apps WHERE id = $1",
                                                 [appId]).first else { throw RotationError.unknownApp }
            let ttl = try app.int("access_token_ttl"), cacheSeconds = try app.int("jwks_cache_seconds")
            let states = try connection.query("""
                SELECT kid, alg, public_pem, state, extract(epoch FROM activates_at)::float8 AS activates,
                       extract(epoch FROM retires_at)::float8 AS retires
                FROM signing_key_states WHERE app_id = $1
                """, [appId]).map(Self.keyState)
            if let pending = states.first(where: { $0.state == "next" }) {
                throw RotationError.pending(kid: pending.kid, activatesAt: pending.activatesAt)
            }
            // Write down what time has made true since the last rotation, current key last (the
            // one-current index), then schedule the current key's end and add the next one.
            try connection.query("""
                UPDATE signing_keys s SET status = v.state FROM signing_key_states v
                WHERE s.app_id = $1 AND v.app_id = s.app_id AND v.kid = s.kid AND v.state IN ('retired', 'previous')
                  AND s.status <> v.state
                """, [appId])
            let current = states.first { $0.state == "current" }
            var replacedRetiresAt: Date?
            if let current {
                let retires = try connection.query("""
                    UPDATE signing_keys SET status = 'current',
                        retires_at = now() + make_interval(secs => $3::int + $4::int + $5::int)
                    WHERE app_id = $1 AND kid = $2
                    RETURNING extract(epoch FROM retires_at)::float8 AS retires
                    """, [appId, current.kid, String(cacheSeconds), String(ttl), String(Self.retirementSlackSeconds)])
                replacedRetiresAt = try retires.first.map { Date(timeIntervalSince1970: try $0.double("retires")) }
            }
            let inserted = try connection.query("""
                INSERT INTO signing_keys (app_id, kid, alg, public_pem, private_key_enc, status, activates_at)
                VALUES ($1, $2, $3, $4, $5, 'next', now() + make_interval(secs => $6::int))
                RETURNING extract(epoch FROM activates_at)::float8 AS activates
                """, [appId, kid, algorithm.rawValue, publicPEM, PGParam.bytea(sealed), String(cacheSeconds)])
            guard let activates = try inserted.first?.double("activates") else {
                throw StoreError.failed(sqlState: "", message: "no row returned")
            }
            return Rotation(kid: kid, algorithm: algorithm, activatesAt: Date(timeIntervalSince1970: activates),
                            replacedKid: current?.kid, replacedRetiresAt: replacedRetiresAt)
        }
    }
}
