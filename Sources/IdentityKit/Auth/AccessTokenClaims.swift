/// The claims of an access token (docs/api-contract.md, "Tokens and sessions").
public struct AccessTokenClaims: Codable, Sendable, Equatable {
    public var iss: String
    public var aud: String
    /// RFC 9068's `client_id`: the app's id, the client every token of the app is issued to.
    /// It is also `aud` (the app's backend is the resource server) and the OAuth client id that
    /// introspection and revocation take with the app's secret key; the app key is a routing
    /// key clients send, not an OAuth client identifier. Tokens minted before it read as `aud`.
    public var clientId: String
    public var sub: String
    public var sid: String
    public var iat: Int64
    public var exp: Int64
    public var jti: String
    public var amr: [String]
    /// Authenticator assurance level: 1 for one factor, 2 for two (or a passkey with user
    /// verification). Tokens minted before MFA carry none and read as 1.
    public var aal: Int
    public var isGuest: Bool
    public var email: String?
    public var emailVerified: Bool
    public var roles: [String]
    /// The user's custom claims (admin API), written beside the standard ones; never a reserved
    /// name (`CustomClaims.reserved`), so they cannot stand in for `sub`, `aud` or `roles`.
    /// Not read back when a token is verified.
    public var custom: [String: JSONValue] = [:]

    public init(iss: String, aud: String, sub: String, sid: String, iat: Int64, exp: Int64, jti: String,
                amr: [String], aal: Int = 1, isGuest: Bool, email: String?, emailVerified: Bool, roles: [String]) {
        self.iss = iss
        self.aud = aud
        self.clientId = aud
        self.sub = sub
        self.sid = sid
        self.iat = iat
        self.exp = exp
        self.jti = jti
        self.amr = amr
        self.aal = aal
        self.isGuest = isGuest
        self.email = email
        self.emailVerified = emailVerified
        self.roles = roles
    }

    enum CodingKeys: String, CodingKey {
        case iss, aud, sub, sid, iat, exp, jti, amr, aal, email, roles
        case clientId = "client_id"
        case isGuest = "is_guest"
        case emailVerified = "email_verified"
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        iss = try c.decode(String.self, forKey: .iss)
        aud = try c.decode(String.self, forKey: .aud)
        clientId = try c.decodeIfPresent(String.self, forKey: .clientId) ?? aud
        sub = try c.decode(String.self, forKey: .sub)
        sid = try c.decode(String.self, forKey: .sid)
        iat = try c.decode(Int64.self, forKey: .iat)
        exp = try c.decode(Int64.self, forKey: .exp)
        jti = try c.decode(String.self, forKey: .jti)
        amr = try c.decode([String].self, forKey: .amr)
        aal = try c.decodeIfPresent(Int.self, forKey: .aal) ?? 1
        isGuest = try c.decode(Bool.self, forKey: .isGuest)
        email = try c.decodeIfPresent(String.self, forKey: .email)
        emailVerified = try c.decode(Bool.self, forKey: .emailVerified)
        roles = try c.decode([String].self, forKey: .roles)
    }
}

extension AccessTokenClaims {
    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(iss, forKey: .iss)
        try container.encode(aud, forKey: .aud)
        try container.encode(clientId, forKey: .clientId)
        try container.encode(sub, forKey: .sub)
        try container.encode(sid, forKey: .sid)
        try container.encode(iat, forKey: .iat)
        try container.encode(exp, forKey: .exp)
        try container.encode(jti, forKey: .jti)
        try container.encode(amr, forKey: .amr)
        try container.encode(aal, forKey: .aal)
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
