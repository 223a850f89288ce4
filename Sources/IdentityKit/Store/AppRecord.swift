/// An app (tenant) as the gateway and workers need it; never its secret key.
public struct AppRecord: Sendable, Equatable {
    public let id: String
    public let name: String
    public let appKey: String
    public let issuer: String
    public let accessTokenTTL: Int
}

/// A signing key's public half, as published in the app's JWKS.
public struct PublicSigningKey: Sendable {
    public let kid: String
    public let alg: String
    public let publicPEM: String
    public let status: String
}
