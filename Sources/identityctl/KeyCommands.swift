import Foundation
import IdentityCredentials
import IdentityKit

/// `identityctl keys rotate APP_ID [--alg RS256|ES256|EdDSA]` and `identityctl keys list APP_ID`.
enum KeyCommands {
    static func rotate(appId: String, algorithm: SigningAlgorithm?, masterKey: [UInt8], pool: PGPool) throws -> [String: Any] {
        let keys = SigningKeyStore(pool: pool)
        // Without --alg the app keeps the algorithm of its current key.
        let current = try keys.states(appId: appId).first { $0.state == "current" }
        let rotation = try keys.rotate(appId: appId, algorithm: algorithm ?? current?.algorithm ?? .rs256, masterKey: masterKey)
        return ["kid": rotation.kid, "alg": rotation.algorithm.rawValue, "state": "next",
                "signs_from": iso(rotation.activatesAt), "replaces": rotation.replacedKid ?? NSNull(),
                "replaced_retires_at": rotation.replacedRetiresAt.map(iso) ?? NSNull()]
    }

    static func list(appId: String, pool: PGPool) throws -> [String: Any] {
        let keys = try SigningKeyStore(pool: pool).states(appId: appId).map { key -> [String: Any] in
            ["kid": key.kid, "alg": key.algorithm.rawValue, "state": key.state, "signs_from": iso(key.activatesAt),
             "retires_at": key.retiresAt.map(iso) ?? NSNull()]
        }
        return ["app_id": appId, "keys": keys,
                "jwks_cache_seconds": try SigningKeyStore(pool: pool).jwksCacheSeconds(appId: appId) ?? NSNull()]
    }

    static func iso(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.string(from: date)
    }

    /// `identityctl bench signing`: access-token signatures and verifications per second for
    /// each algorithm, one thread, over a token-sized message (what a sign-in and a gateway check cost).
    static func bench(seconds: Double) throws -> [String: Any] {
        var results: [[String: Any]] = []
        let message = Array(String(repeating: "x", count: 400).utf8)
        let each = max(0.2, seconds / Double(SigningAlgorithm.allCases.count * 2))
        for algorithm in SigningAlgorithm.allCases {
            let key = try TokenSigningKey.generate(algorithm)
            let publicKey = try TokenSigningKey.fromPEM(key.publicKeyPEM(), algorithm: algorithm)
            let signature = try key.sign(message)
            let signs = try count(for: each) { _ = try key.sign(message) }
            let verifies = try count(for: each) {
                guard publicKey.verify(message, signature: signature) else { throw UserImportCommand.ImportFailure("bench: a signature did not verify") }
            }
            results.append(["alg": algorithm.rawValue, "sign_per_second": (Double(signs) / each).rounded(),
                            "verify_per_second": (Double(verifies) / each).rounded(), "signature_bytes": signature.count])
        }
        return ["threads": 1, "seconds_each": each, "algorithms": results]
    }

    private static func count(for seconds: Double, _ body: () throws -> Void) throws -> Int {
        let deadline = Date().addingTimeInterval(seconds)
        var done = 0
        while Date() < deadline {
            for _ in 0..<10 { try body() }
            done += 10
        }
        return done
    }
}
