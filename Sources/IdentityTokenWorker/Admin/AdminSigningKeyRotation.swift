import Foundation
import IdentityCredentials
import IdentityKit

/// `identity.admin.v1.RotateSigningKey`: `SigningKeyStore.rotate`, as `identityctl keys rotate`
/// runs it; here because the token worker holds the master key that seals the new private key.
struct AdminSigningKeyRotation: Sendable {
    let keys: SigningKeyStore
    let masterKey: [UInt8]

    func handle(_ command: AdminV1.RotateSigningKey) throws -> AdminV1.SigningKeyRotated {
        var algorithm: SigningAlgorithm?
        if !command.alg.isEmpty {
            guard let named = SigningAlgorithm(rawValue: command.alg) else {
                throw ServiceError.validationFailed([.init(location: "body.alg", message: "must be RS256, ES256 or EdDSA")])
            }
            algorithm = named
        }
        let current = try keys.states(appId: command.appId).first { $0.state == "current" }
        do {
            let rotation = try keys.rotate(appId: command.appId, algorithm: algorithm ?? current?.algorithm ?? .rs256,
                                           masterKey: masterKey)
            Log.info("signing key rotated", ["app_id": command.appId, "kid": rotation.kid,
                                             "alg": rotation.algorithm.rawValue, "actor": command.actor])
            return AdminV1.SigningKeyRotated(kid: rotation.kid, alg: rotation.algorithm.rawValue,
                                             signsFrom: Timestamp.rfc3339(rotation.activatesAt),
                                             replaces: rotation.replacedKid ?? "",
                                             replacedRetiresAt: rotation.replacedRetiresAt.map(Timestamp.rfc3339) ?? "")
        } catch SigningKeyStore.RotationError.unknownApp {
            throw ServiceError.notFound
        } catch SigningKeyStore.RotationError.pending {
            throw ServiceError.keyRotationPending
        }
    }
}
