/// The claims of an access token (PRODUCT.md, "Tokens and sessions").
public struct AccessTokenClaims: Codable, Sendable, Equatable {
    public var iss: String
    public var aud: String
    public var sub: String
    public var sid: String
    public var iat: Int64
    public var exp: Int64
    public var jti: String
    public var amr: [String]
    public var isGuest: Bool
    public var email: String?
    public var emailVerified: Bool
    public var roles: [String]

    public init(iss: String, aud: String, sub: String, sid: String, iat: Int64, exp: Int64, jti: String,
                amr: [String], isGuest: Bool, email: String?, emailVerified: Bool, roles: [String]) {
        self.iss = iss
        self.aud = aud
        self.sub = sub
        self.sid = sid
        self.iat = iat
        self.exp = exp
        self.jti = jti
        self.amr = amr
        self.isGuest = isGuest
        self.email = email
        self.emailVerified = emailVerified
        self.roles = roles
    }

    enum CodingKeys: String, CodingKey {
        case iss, aud, sub, sid, iat, exp, jti, amr, email, roles
        case isGuest = "is_guest"
        case emailVerified = "email_verified"
    }
}
