import Foundation
import IdentityCredentials
import IdentityKit
import IdentityOutbound

/// `RevokeAppleToken`: revokes a deleted account's Apple refresh token at Apple (or, when none
/// was kept, the one its deletion's authorization code is exchanged for). Until Apple answers
/// 200 it is retried through delay queues with growing delays (the last one repeating), since
/// the App Store requires the revocation to happen.
///
/// Apple's authorization codes are single-use: a code is exchanged at most once. The refresh
/// token it gives is sealed into the retry message in the code's place, so every retry revokes
/// that token and none exchanges the code again. A code Apple refuses to exchange (spent,
/// expired, unknown: a 4xx) can never become a token, so that command goes to
/// `identity.revocation.dead` with an error line, instead of being retried forever.
struct AppleRevocation: Sendable {
    struct Counters: Sendable {
        var revoked = 0
        var retried = 0
        var codesExchanged = 0
        var deadLettered = 0
    }

    let settings: ProviderSettingsStore
    let apple: AppleClient
    let masterKey: [UInt8]
    private var appleSecrets: SecretSealer { SecretSealer(masterKey: masterKey, purpose: .appleSecretSeal) }
    let retryDelays: [Int]
    let counters: Locked<Counters>

    func handle(_ command: RevocationV1.RevokeAppleToken) -> [OutgoingMessage] {
        let fields: LogFields = ["app_id": command.appId, "client_id": command.clientId, "attempt": command.attempt]
        // What a retry carries: once the code is exchanged, the sealed token and no code.
        var next = command
        do {
            let app = try settings.settings(appId: command.appId)
            guard let credentials = try AppleCredentials.load(app, appId: command.appId, masterKey: masterKey) else {
                throw OutboundHTTP.Failure(description: "no Apple team id, key id or .p8 key set for the app")
            }
            let token: String
            if !command.sealedRefreshToken.isEmpty {
                let sealed = Array(command.sealedRefreshToken)
                token = String(decoding: try appleSecrets.open(sealed, associatedData: refreshTokenAAD(command)), as: UTF8.self)
            } else if !command.sealedCode.isEmpty {
                let code = try SecretSealer(masterKey: masterKey, purpose: .busSecretSeal)
                    .open(Array(command.sealedCode),
                          associatedData: ProviderSecretAAD.appleCode(appId: command.appId, subject: command.subject))
                do {
                    token = try apple.exchange(code: String(decoding: code, as: UTF8.self), clientId: command.clientId,
                                               credentials: credentials)
                } catch let refusal as AppleClient.Refusal {
                    return deadLetter(command, why: "Apple will not exchange the authorization code", fields.merging(
                        ["status": refusal.status, "apple_error": refusal.error]) { $1 })
                }
                counters.withLock { $0.codesExchanged += 1 }
                // The code is spent from here on, whatever happens next.
                next.sealedCode = Data()
                next.sealedRefreshToken = Data(try appleSecrets.seal(Array(token.utf8),
                                                                     associatedData: refreshTokenAAD(command)))
            } else {
                return deadLetter(command, why: "neither a refresh token nor an authorization code to revoke with", fields)
            }
            if try apple.revoke(refreshToken: token, clientId: command.clientId, credentials: credentials) {
                counters.withLock { $0.revoked += 1 }
                Log.info("Apple token revoked", fields)
                return []
            }
            Log.warning("Apple refused the revocation; will retry", fields)
        } catch {
            Log.warning("Apple revocation failed; will retry", fields.merging(["error": String(describing: error)]) { $1 })
        }
        guard !next.sealedRefreshToken.isEmpty || !next.sealedCode.isEmpty else {
            // Exchanged, but the token could not be sealed for the retry: retrying would
            // exchange the code a second time, which Apple refuses.
            return deadLetter(command, why: "the exchanged refresh token could not be kept for a retry", fields)
        }
        counters.withLock { $0.retried += 1 }
        return retry(next)
    }

    private func refreshTokenAAD(_ command: RevocationV1.RevokeAppleToken) -> [UInt8] {
        ProviderSecretAAD.appleRefreshToken(appId: command.appId, subject: command.subject)
    }

    private func retry(_ command: RevocationV1.RevokeAppleToken) -> [OutgoingMessage] {
        var next = command
        next.attempt += 1
        let level = min(Int(command.attempt), retryDelays.count - 1)
        guard var message = message(next, queue: BusTopology.revocationRetry(level)) else { return [] }
        message.expirationMilliseconds = retryDelays[level]
        return [message]
    }

    /// Parks the command on the dead-letter queue (its secrets stay sealed) for an operator.
    private func deadLetter(_ command: RevocationV1.RevokeAppleToken, why reason: String,
                            _ fields: LogFields) -> [OutgoingMessage] {
        let total = counters.withLock { counters -> Int in
            counters.deadLettered += 1
            return counters.deadLettered
        }
        Log.error("Apple revocation dead-lettered: \(reason)", fields.merging(
            ["queue": BusTopology.revocationDead, "dead_lettered_total": total]) { $1 })
        return message(command, queue: BusTopology.revocationDead).map { [$0] } ?? []
    }

    private func message(_ command: RevocationV1.RevokeAppleToken, queue: String) -> OutgoingMessage? {
        guard let body = try? ProtoJSON.encode(command) else { return nil }
        var message = OutgoingMessage(exchange: "", routingKey: queue, type: RevocationV1.RevokeAppleToken.protoName,
                                      body: body)
        message.appId = command.appId
        message.messageId = Identifiers.nowULID()
        message.persistent = true
        return message
    }
}
