/// An app (tenant) as the gateway and workers need it; never its secret key.
public struct AppRecord: Sendable, Equatable {
    public let id: String
    public let name: String
    public let appKey: String
    public let issuer: String
    public let accessTokenTTL: Int
    /// `session_end_proof` is `fresh`: ending another session of the user, or all of them,
    /// takes a sign-in within the step-up window (checked by the gateway and the revocation worker).
    public let sessionEndNeedsFreshSignIn: Bool

    package init(id: String, name: String, appKey: String, issuer: String, accessTokenTTL: Int,
                 sessionEndNeedsFreshSignIn: Bool = false) {
        self.id = id
        self.name = name
        self.appKey = appKey
        self.issuer = issuer
        self.accessTokenTTL = accessTokenTTL
        self.sessionEndNeedsFreshSignIn = sessionEndNeedsFreshSignIn
    }
}
