import IdentityKit

/// Seals TOTP secrets at rest (`mfa_factors.secret_enc`): AES-256-GCM under a sub-key of the
/// master key (HKDF, label `mfa-totp-secret-v1`), bound to its row (app, user) so a sealed
/// secret cannot be moved to another account. Only token workers derive it; the gateway
/// neither has the master key nor may read the column.
public struct TOTPSecretSeal: Sendable {
    public static let label = SubKey.totpSecretSeal.rawValue

    let key: [UInt8]

    public init(masterKey: [UInt8]) { key = HKDF.subkey(of: masterKey, label: Self.label) }

    public func seal(_ secret: [UInt8], appId: String, uid: String) throws -> [UInt8] {
        try AESGCM.seal(secret, key: key, associatedData: Self.binding(appId: appId, uid: uid))
    }

    public func open(_ sealed: [UInt8], appId: String, uid: String) throws -> [UInt8] {
        try AESGCM.open(sealed, key: key, associatedData: Self.binding(appId: appId, uid: uid))
    }

    private static func binding(appId: String, uid: String) -> [UInt8] { Array("totp:\(appId):\(uid)".utf8) }
}
