import Foundation
import IdentityKit
import IdentityOutbound

/// `RevokeAppleToken`: revokes a deleted account's Apple refresh token at Apple (or, when none
/// was kept, the one its deletion's authorization code is exchanged for). Until Apple answers
/// 200 it is retried through delay queues with growing delays (the last one repeating), since
/// the App Store requires the revocation to happen.
struct AppleRevocation: Sendable {
    let settings: ProviderSettingsStore
    let apple: AppleClient
    let masterKey: [UInt8]
    let retryDelays: [Int]

    func handle(_ command: RevocationV1.RevokeAppleToken) -> [OutgoingMessage] {
        let fields = ["app_id": command.appId, "attempt": String(command.attempt)]
        do {
            if try revoke(command) {
                Log.info("Apple token revoked", fields)
                return []
            }
            Log.warning("Apple refused the revocation; will retry", fields)
        } catch {
            Log.warning("Apple revocation failed; will retry", fields.merging(["error": String(describing: error)]) { $1 })
        }
        return retry(command)
    }

    private func revoke(_ command: RevocationV1.RevokeAppleToken) throws -> Bool {
        let app = try settings.settings(appId: command.appId)
        guard let credentials = try AppleCredentials.load(app, appId: command.appId, masterKey: masterKey) else {
            throw OutboundHTTP.Failure(description: "no Apple team id, key id or .p8 key set for the app")
        }
        let token: String
        if !command.sealedRefreshToken.isEmpty {
            token = String(decoding: try AESGCM.open(Array(command.sealedRefreshToken), key: masterKey,
                                                     associatedData: ProviderSecretAAD.appleRefreshToken(
                                                         appId: command.appId, subject: command.subject)), as: UTF8.self)
        } else {
            let code = try AESGCM.open(Array(command.sealedCode), key: masterKey,
                                       associatedData: ProviderSecretAAD.appleCode(appId: command.appId, subject: command.subject))
            token = try apple.exchange(code: String(decoding: code, as: UTF8.self), clientId: command.clientId,
                                       credentials: credentials)
        }
        return try apple.revoke(refreshToken: token, clientId: command.clientId, credentials: credentials)
    }

    private func retry(_ command: RevocationV1.RevokeAppleToken) -> [OutgoingMessage] {
        var next = command
        next.attempt += 1
        let level = min(Int(command.attempt), retryDelays.count - 1)
        guard let body = try? ProtoJSON.encode(next) else { return [] }
        var message = OutgoingMessage(exchange: "", routingKey: BusTopology.revocationRetry(level),
                                      type: RevocationV1.RevokeAppleToken.protoName, body: body)
        message.appId = command.appId
        message.messageId = Identifiers.nowULID()
        message.expirationMilliseconds = retryDelays[level]
        message.persistent = true
        return [message]
    }
}
