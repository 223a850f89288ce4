import Foundation
import IdentityKit

/// The `session-object` profile (seed 002; docs/client-profiles.md, "Profiles") as
/// request/response mapping around the core routes; no flow of its own:
/// - `POST /v1/auth/login {email, password, transport?}` is `POST /v1/auth/sign-in`;
///   `POST /v1/auth/apple/nonce` is `GET /v1/auth/nonce` (answered bare: `{nonce, expires_at}`);
///   `POST /v1/auth/apple/token {id_token, nonce, authorization_code?, name?, transport?}` is
///   `POST /v1/auth/apple`, with the guide's length limits; `POST /v1/auth/mfa/verify` and
///   `POST /v1/auth/passkey/verify` take `transport?` too, so a sign-in with a second factor or
///   a passkey ends in the same session answer.
/// - A sign-in's answer becomes `{token, session, user}`: the session gets its opaque session
///   token from the token worker (`IssueSessionToken`, sent with the new access token, which
///   the client never sees), the session and user objects carry `ses_`/`usr_` ids.
/// - `transport: "cookie"`: the token travels in a `__Host-` cookie (HttpOnly, Secure,
///   SameSite=Lax) instead of the body. A request carrying that cookie (and no Authorization)
///   is read as `Authorization: Bearer <token>`; when it changes state, its `Origin` must be one
///   of the app's `allowed_origins` (else 403), so no CSRF token is needed. Sign-out clears it.
/// - The device's own sign-in budget (docs/flows.md, "The owner is not locked out"): with the
///   cookie transport, a password sign-in's `device_token` goes into a second `__Host-` cookie
///   (HttpOnly, Secure, SameSite=Strict, 90 days), and a later sign-in from that browser sends
///   it on as `X-Device-Token`, so a guesser elsewhere cannot lock the owner's browser out.
/// - Errors stay problem+json, as in docs/api-contract.md.
struct SessionObjectEdge: Sendable {
    static let cookieName = "__Host-session"
    static let deviceCookieName = "__Host-device"
    /// As long as the service keeps a device token (`sign_in_devices`: 90 days).
    static let deviceCookieSeconds = 90 * 86_400

    let sessions: SessionStore
    let commands: CommandSender

    enum Transport: String { case bearer, cookie }

    /// What a mapped sign-in needs to finish its answer.
    struct SignIn: Sendable {
        let transport: Transport
    }

    /// The core request for `request`, and whether its answer is a sign-in to map.
    func map(_ request: HTTPRequest, profile: ClientProfile) throws -> (HTTPRequest, SignIn?, clearsCookie: Bool) {
        let request = try cookieAsBearer(request, profile: profile)
        switch (request.method, request.path) {
        case ("POST", "/v1/auth/login"):
            var body = try Self.reader(request)
            let email = body.requiredString("email")
            let password = body.requiredString("password")
            let transport = try Self.transport(&body, request, profile)
            try body.finish()
            let core = JSONValue.object(["email": .string(email ?? ""), "password": .string(password ?? "")])
            return (Self.deviceCookieAsHeader(request.with(path: "/v1/auth/sign-in", body: core)), SignIn(transport: transport), false)
        case ("POST", "/v1/auth/apple/nonce"):
            return (request.with(method: "GET", path: "/v1/auth/nonce"), nil, false)
        case ("POST", "/v1/auth/apple/token"):
            var body = try Self.reader(request)
            let idToken = body.optionalString("id_token", maxLength: 16_384)
            let nonce = body.optionalString("nonce", maxLength: 256)
            let code = body.optionalString("authorization_code", maxLength: 4096)
            let name = body.optionalString("name", maxLength: 200) { $0.isEmpty ? "expected length >= 1" : nil }
            for (key, value) in [("id_token", idToken), ("nonce", nonce)] where value.string == nil {
                body.add(.init(location: "body.\(key)", message: "is required"))
            }
            let transport = try Self.transport(&body, request, profile)
            try body.finish()
            var core: [String: JSONValue] = ["identity_token": .string(idToken.string ?? ""), "nonce": .string(nonce.string ?? "")]
            if let code = code.string { core["authorization_code"] = .string(code) }
            if let name = name.string {
                // Apple's fullName as one string: the core keeps given and family name.
                let parts = name.split(separator: " ", maxSplits: 1).map(String.init)
                core["first_name"] = .string(parts.first ?? name)
                if parts.count == 2 { core["last_name"] = .string(parts[1]) }
            }
            return (request.with(path: "/v1/auth/apple", body: .object(core)), SignIn(transport: transport), false)
        case ("POST", "/v1/auth/mfa/verify"), ("POST", "/v1/auth/passkey/verify"):
            // The core's own body, less `transport`; its fields are the core route's to check.
            var body = try Self.reader(request)
            let transport = try Self.transport(&body, request, profile)
            try body.finish()
            guard case .object(var core) = try BodyReader.parse(request.body) else { throw ServiceError.invalidJSON }
            core["transport"] = nil
            return (request.with(path: request.path, body: .object(core)), SignIn(transport: transport), false)
        case ("POST", "/v1/auth/sign-out"), ("POST", "/v1/auth/sign-out-all"):
            return (request, nil, request.header("cookie").flatMap(Self.sessionCookie) != nil)
        default:
            return (request, nil, false)
        }
    }

    /// The core's answer in this profile's shape.
    func answer(_ result: RouteResult, request: HTTPRequest, appId: String, signIn: SignIn?, clearsCookie: Bool) -> RouteResult {
        if clearsCookie {
            return result.flatMap { response in
                var response = response
                if response.status == 204 { response.headers.append(("Set-Cookie", Self.clearedCookie)) }
                return .now(response)
            }
        }
        if request.path == "/v1/auth/nonce" {
            return result.flatMap { response in
                guard response.status == 200, let data = Self.data(response) else { return .now(response) }
                return .now(.json(data, headers: Self.extraHeaders(response)))
            }
        }
        guard let signIn else { return result }
        let requestId = request.requestId
        return result.flatMap { response in
            guard let data = Self.data(response) else { return .now(response) }
            if response.status == 202, let mfa = data["mfa"] { return .now(.json(.object(["mfa": mfa]), status: 202)) }
            guard (200...201).contains(response.status), case .string(let access)? = data["access_token"],
                  case .string(let sessionId)? = data["session_id"], let user = data["user"],
                  case .string(let uid)? = user["uid"]
            else { return .now(response) }
            return issueToken(access: access, appId: appId, uid: uid, sessionId: sessionId, request: request).flatMap { issued in
                guard issued.status == 200, case .string(let token)? = Self.data(issued)?["session_token"] else {
                    return .now(issued)
                }
                do {
                    var headers = Self.extraHeaders(response)
                    if signIn.transport == .cookie, case .string(let device)? = data["device_token"],
                       SignInDeviceStore.isDeviceToken(device) {
                        headers.append(("Set-Cookie", "\(Self.deviceCookieName)=\(device); Path=/; Max-Age=\(Self.deviceCookieSeconds); "
                                            + "HttpOnly; Secure; SameSite=Strict"))
                    }
                    return .now(try self.session(token: token, appId: appId, uid: uid, sessionId: sessionId, user: user,
                                                 transport: signIn.transport, headers: headers))
                } catch {
                    return .now(.problem(.answering(error, what: "session-object answer", fields: ["request_id": requestId]),
                                         requestId: requestId))
                }
            }
        }
    }

    func issueToken(access: String, appId: String, uid: String, sessionId: String, request: HTTPRequest) -> RouteResult {
        var headers = request.headers
        headers["authorization"] = "Bearer " + access
        let caller = HTTPRequest(method: request.method, path: request.path, headers: headers, body: Data(),
                                 clientIP: request.clientIP, peerIP: request.peerIP, requestId: request.requestId)
        return commands.send(TokenV1.IssueSessionToken(appId: appId, uid: uid, sessionId: sessionId),
                             expecting: TokenV1.SessionTokenIssued.self, appId: appId, request: caller) {
            HTTPResponse.data(.object(["session_token": .string($0.sessionToken)]))
        }
    }

    /// `{token, session, user}`, or with the cookie transport the cookie and `{session, user}`.
    private func session(token: String, appId: String, uid: String, sessionId: String, user: JSONValue, transport: Transport,
                         headers: [(String, String)]) throws -> HTTPResponse {
        guard let live = try sessions.live(appId: appId, uid: uid).first(where: { $0.id == sessionId }) else {
            throw ServiceError.invalidToken
        }
        let stamp = { (micros: Int64) in JSONValue.string(Timestamp.rfc3339(microsecondsSinceEpoch: micros)) }
        var body: [String: JSONValue] = [
            "session": .object([
                "id": .string(Self.prefixed("ses_", sessionId)), "created_at": stamp(live.createdAtMicros),
                "expires_at": stamp(live.expiresAtMicros), "last_seen_at": stamp(live.lastSeenAtMicros),
                "current": .bool(true), "mfa_verified": .bool(live.amr.contains("mfa")),
                "ip": JSONValue(live.ip), "user_agent": JSONValue(live.userAgent),
            ]),
            "user": .object([
                "id": .string(Self.prefixed("usr_", uid)), "email": user["email"] ?? .null,
                "email_verified": user["email_verified"] ?? .bool(false), "has_password": user["has_password"] ?? .bool(false),
                "roles": user["roles"] ?? .array([]), "created_at": user["created_at"] ?? .null,
            ]),
        ]
        var extra = headers
        switch transport {
        case .bearer:
            body["token"] = .string(token)
        case .cookie:
            let seconds = max(0, live.expiresAtMicros / 1_000_000 - Timestamp.nowSeconds())
            // First: the session's cookie is the answer's cookie (a client reading one reads it).
            extra.insert(("Set-Cookie", "\(Self.cookieName)=\(token); Path=/; Max-Age=\(seconds); HttpOnly; Secure; SameSite=Lax"),
                         at: 0)
        }
        return .json(.object(body), headers: extra)
    }

    // MARK: - cookie

    /// A request with the session cookie and no Authorization is read as bearing the cookie's
    /// token; one that changes state must come from an allowed origin.
    private func cookieAsBearer(_ request: HTTPRequest, profile: ClientProfile) throws -> HTTPRequest {
        guard request.header("authorization") == nil,
              let token = request.header("cookie").flatMap(Self.sessionCookie) else { return request }
        if !["GET", "HEAD", "OPTIONS"].contains(request.method) { try Self.requireAllowedOrigin(request, profile) }
        var headers = request.headers
        headers["authorization"] = "Bearer " + token
        return HTTPRequest(method: request.method, path: request.path, headers: headers, body: request.body,
                           clientIP: request.clientIP, peerIP: request.peerIP, requestId: request.requestId,
                           parameters: request.parameters)
    }

    static let clearedCookie = "\(cookieName)=; Path=/; Max-Age=0; HttpOnly; Secure; SameSite=Lax"

    /// A sign-in from a browser holding the device cookie carries it as `X-Device-Token`
    /// (unless the request sends one itself); a value that is no device token is left out, as
    /// the core would ignore it.
    static func deviceCookieAsHeader(_ request: HTTPRequest) -> HTTPRequest {
        guard request.header("x-device-token") == nil, let header = request.header("cookie") else { return request }
        for pair in header.split(separator: ";") {
            let trimmed = TextScanning.trimmed(pair)
            guard trimmed.hasPrefix(deviceCookieName + "=") else { continue }
            let value = String(trimmed.dropFirst(deviceCookieName.count + 1))
            guard SignInDeviceStore.isDeviceToken(value) else { return request }
            var headers = request.headers
            headers["x-device-token"] = value
            return HTTPRequest(method: request.method, path: request.path, headers: headers, body: request.body,
                               clientIP: request.clientIP, peerIP: request.peerIP, requestId: request.requestId,
                               parameters: request.parameters)
        }
        return request
    }

    /// The value of our cookie in a `Cookie` header (`a=1; __Host-session=st_…`).
    static func sessionCookie(_ header: String) -> String? {
        for pair in header.split(separator: ";") {
            let trimmed = TextScanning.trimmed(pair)
            if trimmed.hasPrefix(cookieName + "=") {
                let value = String(trimmed.dropFirst(cookieName.count + 1))
                return SessionToken.isSessionToken(value) && value.utf8.count <= 128 ? value : nil
            }
        }
        return nil
    }

    // MARK: - helpers

    static func reader(_ request: HTTPRequest) throws -> BodyReader {
        guard Gateway.isJSON(request.header("content-type")) else { throw ServiceError.unsupportedMediaType }
        return try BodyReader(parsed: BodyReader.parse(request.body))
    }

    /// The sign-in's transport. A sign-in that sets the cookie must come from one of the app's
    /// `allowed_origins`, as every later state change with the cookie must: otherwise any page
    /// could sign a visitor's browser in to an account of its choosing (login CSRF), whether or
    /// not the browser held a cookie before.
    private static func transport(_ body: inout BodyReader, _ request: HTTPRequest, _ profile: ClientProfile) throws
        -> Transport {
        let value = body.optionalString("transport", maxLength: 16) { Transport(rawValue: $0) == nil ? "must be cookie or bearer" : nil }
        let transport = value.string.flatMap(Transport.init) ?? .bearer
        if transport == .cookie { try requireAllowedOrigin(request, profile) }
        return transport
    }

    /// The request's `Origin` is one of the app's `allowed_origins` (403 otherwise): what stands
    /// in for a CSRF token wherever the cookie is set or used.
    private static func requireAllowedOrigin(_ request: HTTPRequest, _ profile: ClientProfile) throws {
        guard let origin = request.header("origin").flatMap(ClientProfile.normalizedOrigin),
              profile.allowedOrigins.contains(origin) else { throw ServiceError.originNotAllowed }
    }

    static func data(_ response: HTTPResponse) -> JSONValue? {
        guard case .value(let body) = JSONValue.parseBody(response.body) else { return nil }
        return body["data"]
    }

    /// Headers of the core's answer worth keeping (rate limits, caching), not its type or length.
    static func extraHeaders(_ response: HTTPResponse) -> [(String, String)] {
        response.headers.filter { $0.0.lowercased() != "content-type" }
    }

    static func prefixed(_ prefix: String, _ id: String) -> String { id.hasPrefix(prefix) ? id : prefix + id }
}

extension HTTPRequest {
    func with(path: String, body: JSONValue) -> HTTPRequest {
        var headers = self.headers
        headers["content-type"] = "application/json"
        return HTTPRequest(method: method, path: path, headers: headers, body: Data(body.serialized.utf8),
                           clientIP: clientIP, peerIP: peerIP, requestId: requestId, parameters: parameters)
    }

    func with(method: String, path: String) -> HTTPRequest {
        HTTPRequest(method: method, path: path, headers: headers, body: Data(), clientIP: clientIP, peerIP: peerIP,
                    requestId: requestId, parameters: parameters)
    }
}

extension RouteResult {
    /// This result's answer handed to `next`, whose result answers instead (now or later).
    func flatMap(_ next: @escaping @Sendable (HTTPResponse) -> RouteResult) -> RouteResult {
        switch self {
        case .now(let response):
            return next(response)
        case .later(let work):
            return .later { respond in
                work { response in next(response).run(respond) }
            }
        }
    }

    func run(_ respond: @escaping @Sendable (HTTPResponse) -> Void) {
        switch self {
        case .now(let response): respond(response)
        case .later(let work): work(respond)
        }
    }
}
