/// An app (tenant) as the gateway and workers need it; never its secret key.
public struct AppRecord: Sendable, Equatable {
    public let id: String
    public let name: String
    public let appKey: String
    public let issuer: String
    public let accessTokenTTL: Int

    package init(id: String, name: String, appKey: String, issuer: String, accessTokenTTL: Int) {
        self.id = id
        self.name = name
        self.appKey = appKey
        self.issuer = issuer
        self.accessTokenTTL = accessTokenTTL
    }
}
