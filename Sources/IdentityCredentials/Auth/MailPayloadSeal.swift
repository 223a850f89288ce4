import IdentityKit

/// Seals what a mail command carries that must not rest in clear in a persistent or
/// dead-lettered broker message (the code). The key is a sub-key of the master key; mailer
/// workers get only this sub-key (`IDENTITY_MAIL_PAYLOAD_KEY`, see `identityctl keys
/// mail-payload-key`), never the master key.
public struct MailPayloadSeal: Sendable {
    public static let label = SubKey.mailPayload.rawValue

    let key: [UInt8]

    public init(key: [UInt8]) { self.key = key }

    /// The sub-key itself (what `identityctl keys mail-payload-key` prints for mailer workers).
    public var keyBytes: [UInt8] { key }

    public init(masterKey: [UInt8]) { key = HKDF.subkey(of: masterKey, label: Self.label) }

    public func seal(_ code: String, messageId: String) throws -> [UInt8] {
        try AESGCM.seal(Array(code.utf8), key: key, associatedData: Array("mail:\(messageId)".utf8))
    }

    public func open(_ sealed: [UInt8], messageId: String) throws -> String {
        String(decoding: try AESGCM.open(sealed, key: key, associatedData: Array("mail:\(messageId)".utf8)), as: UTF8.self)
    }
}
