import Foundation
import GraphQL
import IdentityKit

/// How a GraphQL resolver reaches the core: it sends the REST route's own request through the
/// gateway's pipeline (`Gateway.dispatch`: the route's body checks, its rate limits, its
/// command to the worker with the caller's bearer forwarded as `caller_token`), so no flow is
/// implemented twice, and turns the answer into a value or a GraphQL error carrying the
/// standard catalogue's code.
struct CoreCall: Sendable {
    /// The GraphQL request itself: its headers (`Authorization`, `X-App-Key`, `Host`,
    /// `User-Agent`), client address and request id go with every core request.
    let request: HTTPRequest
    let appId: String
    /// The app's client profile decides what `token` is (docs/client-profiles.md, "GraphQL").
    let singleToken: Bool
    let dispatch: @Sendable (HTTPRequest) -> RouteResult
    let sessionObject: SessionObjectEdge

    /// The core request `method path` with `body` (JSON), answered; `bearer` instead of the
    /// caller's `Authorization` when given (a step that follows a sign-in acts as its user).
    func send(_ method: String, _ path: String, body: JSONValue? = nil, bearer: String? = nil) async -> HTTPResponse {
        var headers = request.headers.filter { !["content-length", "content-type", "transfer-encoding", "cookie"].contains($0.key) }
        if let bearer { headers["authorization"] = "Bearer " + bearer }
        var data = Data()
        if let body {
            headers["content-type"] = "application/json"
            data = Data(body.serialized.utf8)
        }
        let core = HTTPRequest(method: method, path: path, headers: headers, body: data, clientIP: request.clientIP,
                               peerIP: request.peerIP, requestId: request.requestId)
        // The pipeline blocks on the store (app, rate limits, token checks): it runs on a
        // dispatch queue, never on one of Swift concurrency's few cooperative threads.
        let dispatch = self.dispatch
        return await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                switch dispatch(core) {
                case .now(let response): continuation.resume(returning: response)
                case .later(let work): work { continuation.resume(returning: $0) }
                }
            }
        }
    }

    static func wait(_ result: RouteResult) async -> HTTPResponse {
        switch result {
        case .now(let response): return response
        case .later(let work):
            return await withCheckedContinuation { continuation in
                work { continuation.resume(returning: $0) }
            }
        }
    }

    /// The answer's `data`, or the error it carries thrown as a GraphQL error.
    func data(_ method: String, _ path: String, body: JSONValue? = nil) async throws -> JSONValue {
        let response = await send(method, path, body: body)
        try Self.check(response)
        guard response.status != 204 else { return .null }
        return SessionObjectEdge.data(response) ?? .null
    }

    /// A problem+json answer as a GraphQL error: its `code`, its `detail`, and the HTTP
    /// status and field errors as further extensions.
    static func check(_ response: HTTPResponse) throws {
        guard response.status >= 400 else { return }
        var code = response.status >= 500 ? ServiceError.internal.code : ServiceError.validationFailed([]).code
        var detail = HTTPResponse.reasonPhrase(response.status)
        var extensions: [(String, GraphQLValue)] = [("status", .int(response.status))]
        if case .value(let body) = JSONValue.parseBody(response.body) {
            if case .string(let text)? = body["code"] { code = text }
            if case .string(let text)? = body["detail"] { detail = text }
            if let errors = body["errors"] { extensions.append(("errors", GraphQLBridge.value(errors))) }
        }
        if let retry = response.headers.first(where: { $0.0.lowercased() == "retry-after" }), let seconds = Int(retry.1) {
            extensions.append(("retryAfter", .int(seconds)))
        }
        throw GraphQLError(detail, code: code, extensions: extensions)
    }

    /// A sign-in's answer as `AuthPayload`: the token of the app's profile, or the MFA
    /// challenge (`requiresTwoFactor`). `userMetadata`: fields the new user keeps in
    /// `user_metadata` (seed 003's profile fields), written with the new session's token by
    /// `PATCH /v1/me`, so the answer's user has them.
    func signIn(_ method: String, _ path: String, body: JSONValue, userMetadata: JSONValue? = nil) async throws -> GraphQLValue {
        let response = await send(method, path, body: body)
        try Self.check(response)
        guard var data = SessionObjectEdge.data(response) else { throw GraphQLError("Internal error.", code: ServiceError.internal.code) }
        if let userMetadata, data["mfa"] == nil, case .string(let access)? = data["access_token"], case .object(var fields) = data {
            let patched = await send("PATCH", "/v1/me", body: .object(["user_metadata": userMetadata]), bearer: access)
            try Self.check(patched)
            if let user = SessionObjectEdge.data(patched) { fields["user"] = user }
            data = .object(fields)
        }
        if case .object(let mfa)? = data["mfa"] {
            var method: GraphQLValue = .null
            if case .array(let methods)? = mfa["methods"], case .string(let first)? = methods.first {
                method = .string(first == "totp" ? "authenticator" : first)
            }
            return .object([("user", .null), ("token", .null), ("refreshToken", .null), ("requiresTwoFactor", .bool(true)),
                            ("twoFactorToken", GraphQLBridge.value(mfa["challenge_token"] ?? .null)), ("twoFactorMethod", method)])
        }
        guard case .string(let access)? = data["access_token"], case .string(let sessionId)? = data["session_id"],
              let user = data["user"], case .string(let uid)? = user["uid"] else {
            throw GraphQLError("Internal error.", code: ServiceError.internal.code)
        }
        var token = access
        var refresh: GraphQLValue = GraphQLBridge.value(data["refresh_token"] ?? .null)
        if singleToken {
            // The single-token profile's long-lived session token, as its REST edge issues it.
            let issued = await Self.wait(sessionObject.issueToken(access: access, appId: appId, uid: uid, sessionId: sessionId,
                                                                  request: request))
            try Self.check(issued)
            guard case .string(let sessionToken)? = SessionObjectEdge.data(issued)?["session_token"] else {
                throw GraphQLError("Internal error.", code: ServiceError.internal.code)
            }
            token = sessionToken
            refresh = .null
        }
        return .object([("user", GraphQLBridge.user(user)), ("token", .string(token)), ("refreshToken", refresh),
                        ("requiresTwoFactor", .bool(false)), ("twoFactorToken", .null), ("twoFactorMethod", .null)])
    }
}

/// JSON of the core ↔ GraphQL values, and the core's objects in the guide's shapes.
enum GraphQLBridge {
    static func value(_ json: JSONValue) -> GraphQLValue {
        switch json {
        case .null: .null
        case .bool(let flag): .bool(flag)
        case .number(let number): number == number.rounded() && abs(number) < 9e15 ? .int(Int(number)) : .float(number)
        case .string(let text): .string(text)
        case .array(let items): .list(items.map(value))
        case .object(let members): .object(members.sorted { $0.key < $1.key }.map { ($0.key, value($0.value)) })
        }
    }

    static func json(_ value: GraphQLValue) -> JSONValue {
        switch value {
        case .null: .null
        case .bool(let flag): .bool(flag)
        case .int(let number): .number(Double(number))
        case .float(let number): .number(number)
        case .string(let text): .string(text)
        case .list(let items): .array(items.map(json))
        case .object(let pairs): .object(Dictionary(pairs.map { ($0.0, json($0.1)) }, uniquingKeysWith: { _, last in last }))
        }
    }

    /// The core's user (docs/api-contract.md, "Tokens and sessions") as the guide's `User`; the
    /// profile fields the core has no column for come from `user_metadata`.
    static func user(_ core: JSONValue) -> GraphQLValue {
        func field(_ key: String) -> GraphQLValue { value(core[key] ?? .null) }
        let metadata = core["user_metadata"] ?? .object([:])
        let names = [core["first_name"], core["last_name"]].compactMap { item -> String? in
            if case .string(let text)? = item, !text.isEmpty { return text }
            return nil
        }
        return .object([
            ("id", field("uid")), ("username", field("username")), ("email", field("email")),
            ("isEmailVerified", field("email_verified")), ("firstName", field("first_name")), ("lastName", field("last_name")),
            ("displayName", names.isEmpty ? .null : .string(names.joined(separator: " "))), ("photoURL", field("photo_url")),
            ("isGuest", field("is_guest")), ("hasPassword", field("has_password")), ("twoFactorEnabled", field("mfa_enabled")),
            ("createdAt", field("created_at")),
            ("bio", value(metadata["bio"] ?? .null)), ("dateOfBirth", value(metadata["dateOfBirth"] ?? .null)),
            ("gender", value(metadata["gender"] ?? .null)), ("accountType", value(metadata["accountType"] ?? .null)),
        ])
    }
}
