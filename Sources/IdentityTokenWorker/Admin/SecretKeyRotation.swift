import IdentityCredentials
import IdentityKit

/// `identity.admin.v1.RotateSecretKey`: a new secret key (hashed here: the gateway's role may
/// not write keys), the live ones ending after the overlap. `identityctl apps rotate-secret-key`
/// runs the same `SecretKeyStore.rotate`.
struct SecretKeyRotation: Sendable {
    let keys: SecretKeyStore

    func handle(_ command: AdminV1.RotateSecretKey) throws -> AdminV1.SecretKeyRotated {
        if let problem = DeclaredBounds.problem(Int(command.overlapSeconds),
                                                in: GatewayV1.RotateSecretKeyRequest.overlapSecondsRange) {
            throw ServiceError.validationFailed([.init(location: "body.overlap_seconds", message: problem)])
        }
        guard let rotation = try keys.rotate(appId: command.appId, overlapSeconds: Int(command.overlapSeconds)) else {
            throw ServiceError.notFound
        }
        return AdminV1.SecretKeyRotated(
            keyId: rotation.keyId, secretKey: rotation.secretKey, previousKeyIds: rotation.previousKeyIds,
            previousKeysExpireAt: rotation.previousKeyIds.isEmpty
                ? "" : Timestamp.rfc3339(microsecondsSinceEpoch: rotation.previousKeysExpireAtMicros))
    }
}
