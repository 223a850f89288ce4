import Foundation
import IdentityKit

/// Passkeys (docs/api-contract.md, "Sign-in methods"): every call is a command to the token worker,
/// which runs the ceremonies, keeps the challenges and credentials, and issues the session. The
/// gateway reads no passkey table; its handlers, generated from their declarations (gateway.proto),
/// validate bodies and forward the client's `PublicKeyCredential` JSON. (AnswerJSON shows a
/// passkey.)
struct PasskeyRoutes: PasskeyApiHandlers {
    let commands: CommandSender
}
