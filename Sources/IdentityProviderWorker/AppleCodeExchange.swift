import Foundation
import IdentityCredentials
import IdentityKit
import IdentityOutbound

/// `ExchangeAppleCode`: trades the authorization code of an Apple sign-in for Apple's refresh
/// token and keeps it sealed on the user's Apple identity, to revoke at Apple when the account
/// is deleted (App Store rule). Runs after the sign-in committed, off the sign-in's answer.
///
/// The account may be deleted (or the Apple ID unlinked) while the code waits: then there is
/// no identity to keep the token on, and the token is sent for revocation at once
/// (`RevokeAppleToken` to the revocation worker, which retries until Apple answers 200)
/// rather than left valid at Apple for a user who no longer exists.
struct AppleCodeExchange: Sendable {
    let settings: ProviderSettingsStore
    let identities: IdentityStore
    let apple: AppleClient
    let masterKey: [UInt8]

    /// Returns the messages to publish after it: the revocation of an orphaned token, if any.
    func handle(_ command: ProviderV1.ExchangeAppleCode) -> [OutgoingMessage] {
        let fields = ["app_id": command.appId, "uid": command.uid]
        do {
            let app = try settings.settings(appId: command.appId)
            guard let credentials = try AppleCredentials.load(app, appId: command.appId, masterKey: masterKey) else {
                Log.warning("Apple code not exchanged: no team id, key id or .p8 key set", fields)
                return []
            }
            let code = try SecretSealer(masterKey: masterKey, purpose: .busSecretSeal)
                .open(Array(command.sealedCode), associatedData: ProviderSecretAAD.appleCode(appId: command.appId, subject: command.subject))
            let refreshToken = try apple.exchange(code: String(decoding: code, as: UTF8.self), clientId: command.clientId,
                                                  credentials: credentials)
            let sealed = try SecretSealer(masterKey: masterKey, purpose: .appleSecretSeal)
                .seal(Array(refreshToken.utf8), associatedData: ProviderSecretAAD.appleRefreshToken(appId: command.appId,
                                                                                             subject: command.subject))
            if try identities.storeAppleRefreshToken(appId: command.appId, uid: command.uid, subject: command.subject,
                                                     clientId: command.clientId, sealed: sealed) {
                Log.info("Apple authorization code exchanged", fields)
                return []
            }
            Log.info("Apple authorization code exchanged after the account was deleted; revoking its token", fields)
            return try [revocation(command, sealedRefreshToken: sealed)]
        } catch {
            Log.warning("Apple code exchange failed", fields.merging(["error": String(describing: error)]) { $1 })
            return []
        }
    }

    private func revocation(_ command: ProviderV1.ExchangeAppleCode, sealedRefreshToken: [UInt8]) throws -> OutgoingMessage {
        let revoke = RevocationV1.RevokeAppleToken(appId: command.appId, subject: command.subject, clientId: command.clientId,
                                                   sealedRefreshToken: Data(sealedRefreshToken))
        var message = OutgoingMessage(exchange: "", routingKey: BusTopology.revocationCommands,
                                      type: RevocationV1.RevokeAppleToken.protoName, body: try ProtoJSON.encode(revoke))
        message.appId = command.appId
        message.messageId = Identifiers.nowULID()
        message.persistent = true
        return message
    }
}
