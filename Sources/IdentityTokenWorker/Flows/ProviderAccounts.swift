import Foundation
import IdentityCredentials
import IdentityKit

/// Steps shared by provider sign-in and signed-in linking.
enum ProviderAccounts {
    /// An identity counts only with the provider worker's fresh MAC (`ProviderIdentitySeal`):
    /// anything else was made up or replayed by whoever published the command.
    static func requireSealed(_ identity: ProviderV1.VerifiedIdentity, appId: String, seal: ProviderIdentitySeal) throws {
        guard seal.isValid(identity, appId: appId) else {
            Log.warning("refused a provider identity without a valid seal (forged, altered or stale)",
                        ["app_id": appId, "provider": identity.provider])
            throw ProviderErrors.invalidToken(identity.provider)
        }
    }

    /// Spends the identity's nonce (Apple) inside the transaction; a nonce spent meanwhile
    /// makes the token invalid, as a reused nonce would.
    static func spendNonce(_ identity: ProviderV1.VerifiedIdentity, appId: String, nonces: NonceStore,
                           on connection: PGConnection) throws {
        guard let hex = identity.nonceHash else { return }
        guard let hash = Hex.decode(hex), try nonces.spend(appId: appId, hash: hash, on: connection) else {
            throw ProviderErrors.invalidToken(identity.provider)
        }
    }

    /// Queues the Apple authorization-code exchange to run once this transaction commits
    /// (through the outbox), with the code sealed so it never rests in plaintext.
    static func queueAppleCodeExchange(code: String, identity: ProviderV1.VerifiedIdentity, appId: String, uid: String,
                                       masterKey: [UInt8], on connection: PGConnection) throws {
        let sealed = try SecretSealer(masterKey: masterKey, purpose: .busSecretSeal)
            .seal(Array(code.utf8), associatedData: ProviderSecretAAD.appleCode(appId: appId, subject: identity.subject))
        let command = ProviderV1.ExchangeAppleCode(appId: appId, uid: uid, subject: identity.subject,
                                                   clientId: identity.audience, sealedCode: Data(sealed))
        try EventOutbox.appendCommand(command, queue: BusTopology.providerCommands, appId: appId, on: connection)
    }
}
