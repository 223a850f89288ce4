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
    /// The user's custom claims (admin API), written beside the standard ones; never a reserved
    /// name (`CustomClaims.reserved`), so they cannot stand in for `sub`, `aud` or `roles`.
    /// Not read back when a token is verified.
    public var custom: [String: JSONValue] = [:]

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

extension AccessTokenClaims {
    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(iss, forKey: .iss)
        try container.encode(aud, forKey: .aud)
        try container.encode(sub, forKey: .sub)
        try container.encode(sid, forKey: .sid)
        try container.encode(iat, forKey: .iat)
        try container.encode(exp, forKey: .exp)
        try container.encode(jti, forKey: .jti)
        try container.encode(amr, forKey: .amr)
        try container.encode(isGuest, forKey: .isGuest)
        try container.encodeIfPresent(email, forKey: .email)
        try container.encode(emailVerified, forKey: .emailVerified)
        try container.encode(roles, forKey: .roles)
        guard !custom.isEmpty else { return }
        var extra = encoder.container(keyedBy: CustomClaims.Key.self)
        for (name, value) in custom where !CustomClaims.reserved.contains(name) {
            try extra.encode(CustomClaims.Encoded(value), forKey: CustomClaims.Key(name))
        }
    }
}
