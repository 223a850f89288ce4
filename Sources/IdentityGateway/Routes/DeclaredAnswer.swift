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

    /// "done": 204.
    static func done(_ reply: TokenV1.Done) -> HTTPResponse { .noContent }
}
