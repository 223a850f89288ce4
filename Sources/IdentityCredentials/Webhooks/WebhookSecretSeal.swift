import IdentityKit

/// Seals an endpoint's signing secret (`webhook_endpoints.secret_enc`, `previous_secret_enc`):
/// AES-256-GCM under the webhook-secret sub-key, bound to the app and the endpoint so a sealed
/// secret cannot sign for another endpoint. The token worker and identityctl derive the sub-key
/// from the master key; the webhook worker is given the sub-key alone.
public struct WebhookSecretSeal: Sendable {
    let sealer: SecretSealer

    public init(masterKey: [UInt8]) { sealer = SecretSealer(masterKey: masterKey, purpose: .webhookSecretSeal) }

    public init(subKey: [UInt8]) { sealer = SecretSealer(subKey: subKey) }

    public func seal(_ key: [UInt8], appId: String, endpointId: String) throws -> [UInt8] {
        try sealer.seal(key, associatedData: Self.binding(appId: appId, endpointId: endpointId))
    }

    public func open(_ sealed: [UInt8], appId: String, endpointId: String) throws -> [UInt8] {
        try sealer.open(sealed, associatedData: Self.binding(appId: appId, endpointId: endpointId))
    }

    private static func binding(appId: String, endpointId: String) -> [UInt8] { Array("webhook:\(appId):\(endpointId)".utf8) }
}
