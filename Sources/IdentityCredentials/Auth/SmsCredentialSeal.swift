import IdentityKit

/// Seals an app's SMS auth token (the Twilio-compatible account's secret) for
/// `app_sms_settings.auth_token_enc`, bound to the app id: a `SecretSealer` under
/// `SubKey.smsCredential` of the mail-payload key. Writers (identityctl, the token worker) derive
/// it from the master key through that sub-key, and the mailer worker, which holds the
/// mail-payload key alone, opens it.
public struct SmsCredentialSeal: Sendable {
    let sealer: SecretSealer

    public init(mailPayloadKey: [UInt8]) {
        sealer = SecretSealer(subKey: SubKey.smsCredential.derive(from: mailPayloadKey))
    }

    public init(masterKey: [UInt8]) { self.init(mailPayloadKey: SubKey.mailPayload.derive(from: masterKey)) }

    public func seal(_ token: String, appId: String) throws -> [UInt8] {
        try sealer.seal(Array(token.utf8), associatedData: Self.associatedData(appId))
    }

    public func open(_ sealed: [UInt8], appId: String) throws -> String {
        String(decoding: try sealer.open(sealed, associatedData: Self.associatedData(appId)), as: UTF8.self)
    }

    private static func associatedData(_ appId: String) -> [UInt8] { Array("sms-auth-token:\(appId)".utf8) }
}
