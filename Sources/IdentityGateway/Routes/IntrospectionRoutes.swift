import Foundation
import IdentityKit

/// `POST /v1/token/introspect` (RFC 7662) for app backends: the app's secret key (Bearer or
/// Basic), `token` as a form field or in JSON. The answer is RFC 7662's own top-level object,
/// not `{"data": …}`: `active` with the token's claims, or only `{"active": false}` for anything
/// dead, unknown, expired, malformed or of another app, so the answer says nothing more about
/// a token that does not work. Backends call it per request: one cached key lookup, one cached
/// signature check, the session read from memory (`SessionReads`) and the answer rendered once
/// per token (`LiveTokenAnswers`) for an access token.
struct IntrospectionRoutes: IntrospectionApiHandlers {
    let verifier: TokenVerifier
    let store: IntrospectionStore
    let reads: SessionReads
    let answers = LiveTokenAnswers()

    func introspectToken(_ context: RouteContext) throws -> RouteResult {
        let app = try context.requireAdmin().app
        let token = try Self.token(context.request)
        let inactive = Self.inactive
        if token.hasPrefix("rt_") {
            guard token.utf8.count <= 128, let found = try store.refreshToken(appId: app.id, token: token) else {
                return .now(inactive)
            }
            return .now(.json(Self.active(app: app, sub: found.uid, sid: found.sessionId, amr: found.amr,
                                          aal: found.aal, iat: found.issuedAt, exp: found.expiresAt, type: "refresh_token")))
        }
        // Live: the session not ended nor past its expiry, its user not disabled.
        guard let claims = try? verifier.verify(authorization: "Bearer " + token, app: app),
              let live = try reads.liveSession(appId: app.id, uid: claims.sub, sessionId: claims.sid),
              live.sessionExpiresAt > Timestamp.nowSeconds(), !live.user.profile.disabled else {
            return .now(inactive)
        }
        return .now(answers.answer(token: token, app: app) {
            Self.active(app: app, sub: claims.sub, sid: claims.sid, amr: claims.amr, aal: claims.aal, iat: claims.iat,
                        exp: claims.exp, type: "Bearer")
        })
    }

    /// The answer for anything not live, rendered once.
    static let inactive = HTTPResponse.json(.object(["active": .bool(false)]))

    /// The claims of a live token, as its access tokens carry them: `aal` is the JWT's integer
    /// (a refresh token's is its session's, which every token it refreshes to carries).
    static func active(app: AppRecord, sub: String, sid: String, amr: [String], aal: Int, iat: Int64, exp: Int64,
                       type: String) -> JSONValue {
        .object([
            "active": .bool(true),
            "sub": .string(sub),
            "exp": .number(Double(exp)),
            "iat": .number(Double(iat)),
            "iss": .string(app.issuer),
            "aud": .string(app.id),
            "client_id": .string(app.id),
            "scope": .string(""),
            "token_type": .string(type),
            "sid": .string(sid),
            "amr": JSONValue(amr),
            "aal": JSONValue(aal),
        ])
    }

    /// `token` from a form body (RFC 7662 §2.1) or a JSON one.
    static func token(_ request: HTTPRequest) throws -> String {
        let type = Gateway.mediaType(request.header("content-type"))
        var token: String?
        if type == "application/x-www-form-urlencoded" {
            let body = [UInt8](request.body)
            guard String(validating: body, as: UTF8.self) != nil else { throw ServiceError.invalidJSON }
            token = TextScanning.formValue("token", in: body)
        } else if Gateway.isJSON(mediaType: type) {
            var body = try BodyReader(parsed: try BodyReader.parse(request.body))
            token = body.requiredString("token")
            _ = body.optionalString("token_type_hint", maxLength: 64)  // a hint only, but a string
            try body.finish()
        } else {
            throw ServiceError.unsupportedMediaType
        }
        guard let token, !token.isEmpty, token.utf8.count <= 8192, !TextScanning.hasNUL(token) else {
            throw ServiceError.validationFailed([.init(location: "body.token", message: "is required")])
        }
        return token
    }
}

/// The `active` answers of live access tokens, by the token's exact text: such an answer says
/// only what the verified token and its app's issuer say, so a backend asking about one token
/// again pays for the liveness check alone, not for rendering the same JSON. Only ever read
/// after that check passed; bounded like `TokenVerifier`'s memory of verified tokens.
final class LiveTokenAnswers: Sendable {
    private struct Rendered: Sendable {
        let appId: String
        let issuer: String
        let body: Data
    }

    static let limit = 20_000
    private let rendered = Locked<[String: Rendered]>([:])

    func answer(token: String, app: AppRecord, render: () -> JSONValue) -> HTTPResponse {
        if let known = rendered.withLock({ $0[token] }), known.appId == app.id, known.issuer == app.issuer {
            return HTTPResponse(status: 200, headers: [("Content-Type", "application/json")], body: known.body)
        }
        let response = HTTPResponse.json(render())
        rendered.withLock { rendered in
            if rendered.count >= Self.limit { rendered.removeAll(keepingCapacity: true) }
            rendered[token] = Rendered(appId: app.id, issuer: app.issuer, body: response.body)
        }
        return response
    }
}
