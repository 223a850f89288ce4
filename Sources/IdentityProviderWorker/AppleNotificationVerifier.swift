import Foundation
import IdentityCredentials
import IdentityKit

/// Apple's server-to-server notifications: a JWT Apple signs with its Sign in with Apple keys
/// (RS256, the same JWKS as identity tokens), `iss` Apple, `aud` one of the app's client ids,
/// and an `events` claim (a JSON object, or its text) naming what happened to which Apple user.
/// Returns the event the token worker applies; anything else is the Apple token error.
struct AppleNotificationVerifier: Sendable {
    /// The event types Apple sends and this service applies.
    static let types: Set<String> = ["consent-revoked", "account-delete", "email-disabled", "email-enabled"]
    let settings: ProviderSettingsStore
    let apple: JWKSCache

    func verify(_ command: ProviderV1.VerifyAppleNotification) throws -> ProviderV1.VerifiedAppleEvent {
        let app = try settings.settings(appId: command.appId)
        guard !app.appleClientIds.isEmpty else { throw ServiceError.providerNotConfigured }
        let invalid = ProviderErrors.invalidToken("apple")
        let token = try ProviderToken(command.payload, keys: apple, provider: "apple")
        let now = Timestamp.nowSeconds()
        guard token.string("iss") == "https://appleid.apple.com", token.audience(in: app.appleClientIds) != nil,
              let issued = token.number("iat"), issued <= now + 60, issued >= now - AppleNotificationWindow.seconds,
              let event = Self.event(token.claims["events"]),
              case .string(let type)? = event["type"], Self.types.contains(type),
              case .string(let subject)? = event["sub"], !subject.isEmpty, subject.utf8.count <= 255
        else { throw invalid }
        let time: Int64
        switch event["event_time"] {
        case .number(let seconds)?: time = Int64(seconds)
        case .string(let text)?: time = Int64(text) ?? issued
        default: time = issued
        }
        var email: String?
        if case .string(let address)? = event["email"], !address.isEmpty, address.utf8.count <= 254 { email = address }
        if type == "email-disabled" || type == "email-enabled", email == nil { throw invalid }
        let id = token.string("jti").map { String($0.prefix(128)) } ?? "\(type):\(subject):\(time)"
        return ProviderV1.VerifiedAppleEvent(type: type, subject: subject, email: email, eventTime: time, eventId: id)
    }

    /// `events` as Apple sends it: a JSON object, or that object's text.
    private static func event(_ claim: JSONValue?) -> [String: JSONValue]? {
        switch claim {
        case .object(let fields)?: return fields
        case .string(let text)?:
            guard case .object(let fields)? = JSONValue.parse(Data(text.utf8), maximumBytes: 4096) else { return nil }
            return fields
        default: return nil
        }
    }
}
