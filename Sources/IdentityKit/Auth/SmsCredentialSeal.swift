/// Seals an app's SMS auth token (the Twilio-compatible account's secret) for
/// `app_sms_settings.auth_token_enc`, bound to the app id. The key is `SubKey.smsCredential`
/// of the mail-payload key: writers (identityctl, the token worker) derive it from the master
/// key through that sub-key, and the mailer worker, which holds the mail-payload key alone,
/// opens it.
public struct SmsCredentialSeal: Sendable {
    let key: [UInt8]

    public init(mailPayloadKey: [UInt8]) { key = SubKey.smsCredential.derive(from: mailPayloadKey) }

    public init(masterKey: [UInt8]) { self.init(mailPayloadKey: SubKey.mailPayload.derive(from: masterKey)) }

    public func seal(_ token: String, appId: String) throws -> [UInt8] {
        try AESGCM.seal(Array(token.utf8), key: key, associatedData: Array("sms-auth-token:\(appId)".utf8))
    }

    public func open(_ sealed: [UInt8], appId: String) throws -> String {
        String(decoding: try AESGCM.open(sealed, key: key, associatedData: Array("sms-auth-token:\(appId)".utf8)),
               as: UTF8.self)
    }
}
