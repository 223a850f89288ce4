import Foundation
import IdentityKit

/// Passkeys (PRODUCT.md, "Passkey"): every call is a command to the token worker, which runs the
/// ceremonies, keeps the challenges and credentials, and issues the session. The gateway reads
/// no passkey table; its handlers, generated from their declarations (gateway.proto), validate
/// bodies and forward the client's `PublicKeyCredential` JSON. Here: how a passkey is shown.
struct PasskeyRoutes: PasskeyApiHandlers {
    let commands: CommandSender

    /// The worker's options JSON as a JSON value of the answer (it made it; it parses).
    static func options(_ reply: TokenV1.PasskeyOptions) -> JSONValue {
        JSONValue.parse(Data(reply.optionsJson.utf8)) ?? .object([:])
    }

    static func json(_ passkey: TokenV1.Passkey) -> JSONValue {
        .object(["id": .string(passkey.id), "name": .string(passkey.name), "credential_id": .string(passkey.credentialId),
                 "transports": JSONValue(passkey.transports), "aaguid": .string(passkey.aaguid),
                 "backup_eligible": .bool(passkey.backupEligible), "backup_state": .bool(passkey.backupState),
                 "created_at": .string(passkey.createdAt), "last_used_at": JSONValue(passkey.lastUsedAt)])
    }
}
