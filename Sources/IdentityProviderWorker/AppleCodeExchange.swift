import Foundation
import IdentityKit
import IdentityOutbound

/// `ExchangeAppleCode`: trades the authorization code of an Apple sign-in for Apple's refresh
/// token and keeps it sealed on the user's Apple identity, to revoke at Apple when the account
/// is deleted (App Store rule). Runs after the sign-in committed, off the sign-in's answer.
struct AppleCodeExchange: Sendable {
    let settings: ProviderSettingsStore
    let identities: IdentityStore
    let apple: AppleClient
    let masterKey: [UInt8]

    func handle(_ command: ProviderV1.ExchangeAppleCode) {
        let fields = ["app_id": command.appId, "uid": command.uid]
        do {
            let app = try settings.settings(appId: command.appId)
            guard let credentials = try AppleCredentials.load(app, appId: command.appId, masterKey: masterKey) else {
                Log.warning("Apple code not exchanged: no team id, key id or .p8 key set", fields)
                return
            }
            let code = try AESGCM.open(Array(command.sealedCode), key: masterKey,
                                       associatedData: ProviderSecretAAD.appleCode(appId: command.appId, subject: command.subject))
            let refreshToken = try apple.exchange(code: String(decoding: code, as: UTF8.self), clientId: command.clientId,
                                                  credentials: credentials)
            let sealed = try AESGCM.seal(Array(refreshToken.utf8), key: masterKey,
                                         associatedData: ProviderSecretAAD.appleRefreshToken(appId: command.appId,
                                                                                             subject: command.subject))
            try identities.storeAppleRefreshToken(appId: command.appId, subject: command.subject,
                                                 clientId: command.clientId, sealed: sealed)
            Log.info("Apple authorization code exchanged", fields)
        } catch {
            Log.warning("Apple code exchange failed", fields.merging(["error": String(describing: error)]) { $1 })
        }
    }
}
