import IdentityKit

/// What app backends need to verify tokens offline: the JWKS and the OpenID configuration.
/// Public: no app key needed, the app id is in the path.
struct DiscoveryRoutes: DiscoveryApiHandlers {
    let store: AppStore

    func jwks(_ context: RouteContext) throws -> RouteResult {
        let app = try app(context)
        // Next, current and previous keys, each as its algorithm's JWK (RSA, EC P-256, OKP Ed25519).
        let keys = try store.signingKeys.published(appId: app.id).map { key in
            try TokenSigningKey.fromPEM(key.publicPEM, algorithm: key.algorithm).publicJWK(kid: key.kid)
        }
        // A rotation publishes its next key exactly this long before the key signs, so a JWKS
        // cached for at most this long always holds the key of any token it is asked about.
        let maxAge = try store.signingKeys.jwksCacheSeconds(appId: app.id) ?? 300
        return .now(.json(.object(["keys": .array(keys)]), headers: [("Cache-Control", "public, max-age=\(maxAge)")]))
    }

    func openidConfiguration(_ context: RouteContext) throws -> RouteResult {
        let app = try app(context)
        let document: JSONValue = .object([
            "issuer": .string(app.issuer),
            "jwks_uri": .string(app.issuer + "/jwks.json"),
            "id_token_signing_alg_values_supported": .array(SigningAlgorithm.allCases.map { .string($0.rawValue) }),
            "token_endpoint_auth_methods_supported": ["none"],
            "subject_types_supported": ["public"],
            "response_types_supported": ["token"],
            "claims_supported": ["iss", "aud", "sub", "sid", "iat", "exp", "jti", "amr", "is_guest", "email",
                                 "email_verified", "roles"],
        ])
        return .now(.json(document, headers: [("Cache-Control", "public, max-age=300")]))
    }

    /// The app the path names, resolved by the pipeline (404 when there is none).
    private func app(_ context: RouteContext) throws -> AppRecord {
        guard let app = context.app else { throw ServiceError.notFound }
        return app
    }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByArrayLiteral {
    public init(stringLiteral value: String) { self = .string(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
}
