/// An app's relying-party settings for passkeys (`identityctl apps settings --webauthn-rp-id …`).
public struct WebAuthnSettings: Sendable, Equatable {
    public var rpId: String
    public var rpName: String?
    public var origins: [String]
    public var requireUserVerification: Bool

    public init(rpId: String, rpName: String? = nil, origins: [String] = [], requireUserVerification: Bool = false) {
        self.rpId = rpId
        self.rpName = rpName
        self.origins = origins
        self.requireUserVerification = requireUserVerification
    }
}
