import IdentityKit

/// What app backends need to verify tokens offline and find the OAuth endpoints: the JWKS and
/// the authorization server metadata (RFC 8414), at its own path and where OpenID Connect looks.
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

    func oauthAuthorizationServer(_ context: RouteContext) throws -> RouteResult {
        .now(.json(Self.metadata(of: try app(context)), headers: [("Cache-Control", "public, max-age=300")]))
    }

    func openidConfiguration(_ context: RouteContext) throws -> RouteResult {
        try oauthAuthorizationServer(context)
    }

    /// The app's RFC 8414 metadata: only endpoints the service has. There is no authorization
    /// endpoint and no RFC 6749 token endpoint (sign-in and refresh take JSON with the app key
    /// and answer `{"data": …}`), hence no `response_types_supported`, `token_endpoint` or grant
    /// type; no ID token, hence nothing of OpenID Connect. The endpoints are under the issuer's
    /// own origin and base path (the issuer is `{base}/v1/apps/{app_id}`).
    static func metadata(of app: AppRecord) -> JSONValue {
        let base = baseURL(of: app)
        let clientAuth: JSONValue = ["client_secret_basic", "client_secret_post"]
        return .object([
            "issuer": .string(app.issuer),
            "jwks_uri": .string(app.issuer + "/jwks.json"),
            "grant_types_supported": .array([]),
            "introspection_endpoint": .string(base + "/v1/token/introspect"),
            "introspection_endpoint_auth_methods_supported": clientAuth,
            "revocation_endpoint": .string(base + "/v1/token/revoke"),
            "revocation_endpoint_auth_methods_supported": clientAuth,
            "service_documentation": .string(base + "/api/docs"),
        ])
    }

    /// The service's base URL as the app's issuer (`{base}/v1/apps/{app_id}`) carries it.
    static func baseURL(of app: AppRecord) -> String {
        let suffix = "/v1/apps/" + app.id
        return app.issuer.hasSuffix(suffix) ? String(app.issuer.dropLast(suffix.count)) : app.issuer
    }

    /// Where RFC 8414 discovery finds the app's metadata: the issuer's path after the well-known prefix.
    static func metadataURL(of app: AppRecord) -> String {
        baseURL(of: app) + "/.well-known/oauth-authorization-server/v1/apps/" + app.id
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
