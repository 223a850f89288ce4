import Foundation
import IdentityCredentials
import IdentityKit
import IdentityOutbound

/// An app's push credentials, opened with the push-credential sub-key (the only key of the
/// master key's family besides the mail-payload key that mailer workers hold).
struct PushCredentials: Sendable {
    let apns: APNsClient.Credentials?
    let fcm: FCMServiceAccount?

    static func load(appId: String, store: PushSettingsStore, key: [UInt8]) throws -> PushCredentials {
        let settings = try store.settingsWithSecrets(appId: appId)
        let sealer = SecretSealer(subKey: key)
        var apns: APNsClient.Credentials?
        if let team = settings.apnsTeamId, let keyId = settings.apnsKeyId, let topic = settings.apnsTopic,
           let sealed = settings.apnsPrivateKeySealed {
            let pem = try sealer.open(sealed, associatedData: PushSecretAAD.apnsPrivateKey(appId: appId))
            apns = APNsClient.Credentials(teamId: team, keyId: keyId, topic: topic,
                                          key: try ECSigningKey.fromPEM(String(decoding: pem, as: UTF8.self)))
        }
        var fcm: FCMServiceAccount?
        if let sealed = settings.fcmServiceAccountSealed {
            let json = try sealer.open(sealed, associatedData: PushSecretAAD.fcmServiceAccount(appId: appId))
            fcm = FCMServiceAccount.parse(String(decoding: json, as: UTF8.self))
        }
        return PushCredentials(apns: apns, fcm: fcm)
    }
}
