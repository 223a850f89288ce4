import Foundation
import IdentityKit

/// The `single-token` profile (seed 001; docs/client-profiles.md, "Profiles") as
/// request/response mapping around the core routes; no flow of its own:
/// - Paths without `/v1`: `POST /auth/guest`, `GET /auth/nonce`, `POST /auth/apple`,
///   `POST /auth/google`, `GET /me`, `DELETE /me`, with the guide's camelCase bodies.
/// - Sign-ins answer `{token, user}`: `token` is the session's opaque session token
///   (`SessionToken`, issued by the token worker; a year, checked on every request), never an
///   access or refresh token. A guest's token in `Authorization` upgrades the guest, as in the
///   core; the core's 409 `auth/account-exists` is the guide's `ACCOUNT_EXISTS`, and the same
///   call without the guest token then signs in to that account (the nonce or the Google
///   token is still unspent, so this works while they are valid: 5 minutes).
/// - `user` = `{id, isGuest, email, name}`. (The app's `default_metadata` fields are merged in
///   once the admin branch's setting lands.)
/// - `DELETE /me {identityToken, …}`: the user's own provider decides how `identityToken` is
///   read (an Apple identity token, or a Google id token).
/// - Errors `{"error": {"code", "message"}}` from `errorTable`, the one mapping of the
///   standard catalogue.
struct SingleTokenEdge: Sendable {
    let sessionObject: SessionObjectEdge
    let verifier: TokenVerifier
    let users: UserProfileStore

    /// The standard catalogue's codes as this profile's (code, status); anything else by its
    /// status: 5xx `INTERNAL_ERROR`, 429 `RATE_LIMITED`, 401 `UNAUTHORIZED`, other 4xx
    /// `VALIDATION_ERROR`.
    static let errorTable: [String: (code: String, status: Int)] = [
        ServiceError.validationFailed([]).code: ("VALIDATION_ERROR", 400),
        ServiceError.invalidJSON.code: ("VALIDATION_ERROR", 400),
        ServiceError.unsupportedMediaType.code: ("VALIDATION_ERROR", 400),
        ServiceError.invalidToken.code: ("UNAUTHORIZED", 401),
        ServiceError.tokenExpired.code: ("UNAUTHORIZED", 401),
        ServiceError.invalidAppKey.code: ("UNAUTHORIZED", 401),
        ServiceError.sessionExpired.code: ("UNAUTHORIZED", 401),
        ServiceError.userDisabled.code: ("UNAUTHORIZED", 401),
        ProviderErrors.invalidToken("apple").code: ("INVALID_APPLE_TOKEN", 401),
        ProviderErrors.invalidToken("google").code: ("INVALID_GOOGLE_TOKEN", 401),
        ServiceError.accountExists.code: ("ACCOUNT_EXISTS", 409),
        ServiceError.accountExistsWithDifferentCredential.code: ("ACCOUNT_EXISTS", 409),
        ServiceError.reauthRequired.code: ("REAUTH_REQUIRED", 403),
        ServiceError.rateLimited(retryAfter: 1).code: ("RATE_LIMITED", 429),
    ]

    enum Answer: Sendable { case signIn, nonce, user, passThrough }

    /// The core request, or nil when the path is not one of this profile's.
    func map(_ request: HTTPRequest, app: AppRecord) throws -> (HTTPRequest, Answer)? {
        switch (request.method, request.path) {
        case ("POST", "/auth/guest"):
            var body = try SessionObjectEdge.reader(request)
            let secret = body.requiredString("secret")
            try body.finish()
            return (request.with(path: "/v1/auth/guest", body: .object(["secret": .string(secret ?? "")])), .signIn)
        case ("GET", "/auth/nonce"):
            return (request.with(method: "GET", path: "/v1/auth/nonce"), .nonce)
        case ("POST", "/auth/apple"):
            var body = try SessionObjectEdge.reader(request)
            let identityToken = body.requiredString("identityToken")
            let nonce = body.requiredString("nonce")
            let code = body.optionalString("authorizationCode", maxLength: 4096).string
            let fullName = body.optionalString("fullName", maxLength: 200).string
            try body.finish()
            var core: [String: JSONValue] = ["identity_token": .string(identityToken ?? ""), "nonce": .string(nonce ?? "")]
            if let code { core["authorization_code"] = .string(code) }
            if let fullName, !fullName.isEmpty {
                // Apple's name, given once: kept as the core's first and last name.
                let parts = fullName.split(separator: " ", maxSplits: 1).map(String.init)
                core["first_name"] = .string(parts.first ?? fullName)
                if parts.count == 2 { core["last_name"] = .string(parts[1]) }
            }
            return (request.with(path: "/v1/auth/apple", body: .object(core)), .signIn)
        case ("POST", "/auth/google"):
            var body = try SessionObjectEdge.reader(request)
            let idToken = body.requiredString("idToken")
            try body.finish()
            return (request.with(path: "/v1/auth/google", body: .object(["id_token": .string(idToken ?? "")])), .signIn)
        case ("GET", "/me"):
            return (request.with(method: "GET", path: "/v1/me"), .user)
        case ("DELETE", "/me"):
            return (request.with(path: "/v1/me", body: try deletionProof(request, app: app), method: "DELETE"), .passThrough)
        default:
            return nil
        }
    }

    /// `{identityToken, authorizationCode, nonce}`, `{identityToken}` or `{secret}` as the core's
    /// proof; `identityToken` is read as the user's own provider's token.
    private func deletionProof(_ request: HTTPRequest, app: AppRecord) throws -> JSONValue {
        let claims = try verifier.verify(authorization: request.header("authorization"), app: app)
        var body = try BodyReader(optional: request.body)
        let identityToken = body.optionalString("identityToken", maxLength: 16_384).string
        let code = body.optionalString("authorizationCode", maxLength: 4096).string
        let nonce = body.optionalString("nonce").string
        let secret = body.optionalString("secret").string
        try body.finish()
        if let secret { return .object(["secret": .string(secret)]) }
        guard let identityToken else { return .object([:]) }
        let providers = try users.find(appId: app.id, uid: claims.sub, liveSessionId: claims.sid)?.identityProviders ?? []
        if providers.contains("apple") {
            var proof: [String: JSONValue] = ["identity_token": .string(identityToken), "nonce": .string(nonce ?? "")]
            if let code { proof["authorization_code"] = .string(code) }
            return .object(proof)
        }
        return .object(["id_token": .string(identityToken)])
    }

    /// The core's answer in this profile's shape.
    func answer(_ result: RouteResult, request: HTTPRequest, appId: String, kind: Answer) -> RouteResult {
        result.flatMap { response in
            if response.status >= 400 { return .now(Self.error(response)) }
            guard let data = SessionObjectEdge.data(response) else { return .now(response) }
            switch kind {
            case .passThrough:
                return .now(response)
            case .nonce:
                return .now(.json(.object(["nonce": data["nonce"] ?? .null]), headers: SessionObjectEdge.extraHeaders(response)))
            case .user:
                return .now(.json(Self.user(data), headers: SessionObjectEdge.extraHeaders(response)))
            case .signIn:
                guard case .string(let access)? = data["access_token"], case .string(let sessionId)? = data["session_id"],
                      let user = data["user"], case .string(let uid)? = user["uid"] else { return .now(response) }
                let headers = SessionObjectEdge.extraHeaders(response)
                return sessionObject.issueToken(access: access, appId: appId, uid: uid, sessionId: sessionId, request: request)
                    .flatMap { issued in
                        guard issued.status == 200, case .string(let token)? = SessionObjectEdge.data(issued)?["session_token"] else {
                            return .now(Self.error(issued))
                        }
                        return .now(.json(.object(["token": .string(token), "user": Self.user(user)]), headers: headers))
                    }
            }
        }
    }

    /// `{id, isGuest, email, name}` from the core's user.
    static func user(_ core: JSONValue) -> JSONValue {
        let names = [core["first_name"], core["last_name"]].compactMap { value -> String? in
            if case .string(let text)? = value, !text.isEmpty { return text }
            return nil
        }
        // The app's own user fields (seed 001: plan, planExpiresAt, unitSystem) are the user's app
        // metadata, which a new user gets from the app's default_metadata (docs/client-profiles.md,
        // "App settings"); the guide's four fields win over any of the same name.
        var fields: [String: JSONValue] = [:]
        if case .object(let metadata)? = core["app_metadata"] { fields = metadata }
        fields["id"] = core["uid"] ?? .null
        fields["isGuest"] = core["is_guest"] ?? .bool(false)
        fields["email"] = core["email"] ?? .null
        fields["name"] = names.isEmpty ? .null : .string(names.joined(separator: " "))
        return .object(fields)
    }

    /// A problem+json answer as `{"error": {"code", "message"}}`, its headers (Retry-After,
    /// rate limits) kept.
    static func error(_ response: HTTPResponse) -> HTTPResponse {
        var code = ""
        var detail = ""
        if case .value(let body) = JSONValue.parseBody(response.body) {
            if case .string(let text)? = body["code"] { code = text }
            if case .string(let text)? = body["detail"] { detail = text }
        }
        let mapped = errorTable[code] ?? (response.status >= 500 ? ("INTERNAL_ERROR", 500)
            : response.status == 429 ? ("RATE_LIMITED", 429)
            : response.status == 401 ? ("UNAUTHORIZED", 401) : ("VALIDATION_ERROR", 400))
        return .json(.object(["error": .object(["code": .string(mapped.code), "message": .string(detail)])]),
                     status: mapped.status, headers: SessionObjectEdge.extraHeaders(response))
    }
}

extension HTTPRequest {
    func with(path: String, body: JSONValue, method: String) -> HTTPRequest {
        let mapped = with(path: path, body: body)
        return HTTPRequest(method: method, path: mapped.path, headers: mapped.headers, body: mapped.body, clientIP: clientIP,
                           peerIP: peerIP, requestId: requestId, parameters: parameters)
    }
}
