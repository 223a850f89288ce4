/// An app (tenant) as the gateway and workers need it; never its secret key.
public struct AppRecord: Sendable, Equatable {
    public let id: String
    public let name: String
    public let appKey: String
    public let issuer: String
    public let accessTokenTTL: Int
}
