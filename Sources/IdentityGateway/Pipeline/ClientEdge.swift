import Foundation
import IdentityKit

/// The first pipeline step (docs/clients.md, "Client profiles"): what lets a shipped client reach
/// its app unchanged, before `Gateway.dispatch` runs the core pipeline.
/// - CORS: a preflight (`OPTIONS` with `Access-Control-Request-Method`) carries no app key, so
///   it is answered for an origin that some app allows; the real request gets CORS headers
///   only when its own app allows its `Origin`. Credentials are allowed only for apps of the
///   `session-object` profile (cookie transport), and never with a wildcard: the origin is
///   echoed exactly, with `Vary: Origin`.
/// - Profiles: a `session-object` app's requests and answers are mapped by `SessionObjectEdge`,
///   a `single-token` app's by `SingleTokenEdge`.
/// - Path prefix: an app's extra prefix (seed 000: `/api/v2`) is read as `/v1`, so the same
///   routes answer (the app is then resolved again, from the cache, by the same key or host).
struct ClientEdge: Sendable {
    let apps: AppResolver
    let sessionObject: SessionObjectEdge
    let singleToken: SingleTokenEdge

    /// Headers a browser may send and read on a cross-origin call.
    static let allowedHeaders = "Authorization, Content-Type, Accept, X-App-Key, X-Request-Id, X-Device-Token"
    /// Headers a cross-origin page may read: the ones the service sends (the rate-limit names
    /// come from `RateLimitHeaders`, so they cannot drift from what is sent).
    static let exposedHeaders = ["X-Request-Id", "Retry-After", RateLimitHeaders.names.policy, RateLimitHeaders.names.state]
        .joined(separator: ", ")

    func handle(_ incoming: HTTPRequest, next: (HTTPRequest) -> RouteResult) -> RouteResult {
        let origin = incoming.header("origin").flatMap(ClientProfile.normalizedOrigin)
        if incoming.method == "OPTIONS", incoming.header("access-control-request-method") != nil {
            return .now(preflight(origin: origin))
        }
        // Resolving here is a cache read for known apps; an unknown key is left to dispatch
        // (its 401), which resolves it the same way.
        let resolved = try? apps.resolve(key: incoming.header("x-app-key"), host: incoming.header("host"))
        var request = incoming
        if let prefix = resolved?.profile.pathPrefix, let rest = Self.strip(prefix: prefix, from: incoming.path) {
            request = incoming.with(path: "/v1" + rest)
        }
        var result: RouteResult
        if let resolved, resolved.profile.shape == .sessionObject {
            do {
                let (core, signIn, clearsCookie) = try sessionObject.map(request, profile: resolved.profile)
                result = sessionObject.answer(next(core), request: core, appId: resolved.app.id, signIn: signIn,
                                              clearsCookie: clearsCookie)
            } catch {
                result = .now(.problem(Self.answering(error, request), requestId: request.requestId))
            }
        } else if let resolved, resolved.profile.shape == .singleToken {
            do {
                if let (core, kind) = try singleToken.map(request, app: resolved.app) {
                    result = singleToken.answer(next(core), request: core, appId: resolved.app.id, kind: kind)
                } else {
                    result = next(request)
                }
            } catch {
                result = .now(SingleTokenEdge.error(.problem(Self.answering(error, request), requestId: request.requestId)))
            }
        } else {
            request.resolvedApp = resolved?.app
            result = next(request)
        }
        guard incoming.header("origin") != nil else { return result }
        var headers = [("Vary", "Origin")]
        if let origin, let profile = resolved?.profile, profile.allowedOrigins.contains(origin) {
            headers += [("Access-Control-Allow-Origin", origin), ("Access-Control-Expose-Headers", Self.exposedHeaders)]
            if profile.shape == .sessionObject { headers.append(("Access-Control-Allow-Credentials", "true")) }
        }
        return result.adding(headers: headers)
    }

    /// 204 with the CORS grant for an origin some app allows; 204 without it otherwise (the
    /// browser then refuses the call itself).
    private func preflight(origin: String?) -> HTTPResponse {
        var headers = [("Vary", "Origin")]
        if let origin, let policy = try? apps.originPolicy(origin), policy.allowed {
            headers += [("Access-Control-Allow-Origin", origin),
                        ("Access-Control-Allow-Methods", "GET, POST, PUT, PATCH, DELETE"),
                        ("Access-Control-Allow-Headers", Self.allowedHeaders),
                        ("Access-Control-Max-Age", "600")]
            if policy.credentials { headers.append(("Access-Control-Allow-Credentials", "true")) }
        }
        return HTTPResponse(status: 204, headers: headers, body: Data())
    }

    /// The rest of `path` after `prefix` (`/api/v2/auth/x` → `/auth/x`), nil when it is not under it.
    /// A profile's mapping failed: answered by the one mapping every request uses.
    private static func answering(_ error: any Error, _ request: HTTPRequest) -> ServiceError {
        .answering(error, what: "request", fields: ["request_id": request.requestId, "path": request.path])
    }

    static func strip(prefix: String, from path: String) -> String? {
        guard path.hasPrefix(prefix + "/") else { return nil }
        return String(path.dropFirst(prefix.count))
    }
}

extension HTTPRequest {
    /// The same request under another path (a profile's path mapped onto the core's).
    func with(path: String) -> HTTPRequest {
        HTTPRequest(method: method, path: path, headers: headers, body: body, clientIP: clientIP, peerIP: peerIP,
                    requestId: requestId, parameters: parameters)
    }
}
