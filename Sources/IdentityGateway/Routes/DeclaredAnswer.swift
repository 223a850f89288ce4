import IdentityKit

/// How a worker's reply becomes the HTTP answer of an operation whose handler is generated
/// (gateway.proto, `http.answer`): named there, rendered here once for every such operation.
enum DeclaredAnswer {
    /// "user": the user object, as `GET /v1/me` answers it.
    static func user(_ reply: TokenV1.UserResult) -> HTTPResponse {
        HTTPResponse.data(reply.user.map(UserJSON.make) ?? .null)
    }

    /// "accepted": 202 `{expires_in}`, the lifetime of what was sent (a code).
    static func accepted(_ reply: TokenV1.Accepted) -> HTTPResponse {
        .data(.object(["expires_in": JSONValue(Int(reply.expiresIn))]), status: 202)
    }

    /// "signed_in": the tokens and user of a sign-in at the operation's status, or 202 with the
    /// MFA challenge when a second factor is due.
    static func signedIn(status: Int) -> @Sendable (TokenV1.AuthResult) -> HTTPResponse {
        { UserJSON.signIn($0, status: status) }
    }

    /// "code_check": `{valid}`, whether a code would be accepted (nothing spent).
    static func codeCheck(_ reply: TokenV1.CodeCheck) -> HTTPResponse {
        .data(.object(["valid": .bool(reply.valid)]))
    }

    /// "done": 204.
    static func done(_ reply: TokenV1.Done) -> HTTPResponse { .noContent }
}
