import IdentityKit

/// How the OAuth client endpoints (RFC 7662 introspection, RFC 7009 revocation) refuse a client
/// whose authentication failed: RFC 6749 §5.2's 401 `{"error": "invalid_client"}`, not
/// problem+json, with `WWW-Authenticate: Basic` so an OAuth client library sees the scheme it
/// should use. Every other error of those routes stays problem+json.
enum OAuthClientError {
    static let realm = "identity"
    static let challenge = "Basic realm=\"\(realm)\", charset=\"UTF-8\""
    static let description = "Client authentication failed: send the app id and a live secret key of the app "
        + "(HTTP Basic, or the form fields client_id and client_secret)."

    /// The answer for `error` on a route declared `SecretKeyUse.oauthClient`; nil for an error
    /// that is not about the client.
    static func answer(for error: Error, use: SecretKeyUse?) -> HTTPResponse? {
        guard use?.oauthClient == true, (error as? ServiceError)?.code == ServiceError.invalidSecretKey.code else {
            return nil
        }
        return .json(.object(["error": .string("invalid_client"), "error_description": .string(description)]),
                     status: 401, headers: [("WWW-Authenticate", challenge)])
    }

    /// The document's 401 of such a route.
    static let documented: JSONValue = .object([
        "description": .string("`invalid_client` (RFC 6749 §5.2): " + description),
        "x-oauth-errors": ["invalid_client"],
        "headers": .object(["WWW-Authenticate": .object([
            "description": .string("The scheme to authenticate with: \(challenge)"), "required": .bool(true),
            "schema": .object(["type": "string"])])]),
        "content": .object(["application/json": .object(["schema": .object([
            "type": "object", "required": ["error"],
            "properties": .object(["error": .object(["enum": ["invalid_client"]]),
                                   "error_description": .object(["type": "string"])]),
        ])])]),
    ])
}
