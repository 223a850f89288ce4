import Foundation
import IdentityKit

/// Signing in to the console: the console app's own `session-object` calls (`POST
/// /v1/auth/login`, or a passkey's `POST /v1/auth/passkey/options` and `/verify`, then `POST
/// /v1/auth/mfa/verify` when the account asks for a second factor, all with `transport:
/// "cookie"`), sent through the gateway's whole pipeline as the browser's
/// request, so their rate limits, MFA challenge and session cookie are the service's own. The
/// cookie they set is handed to the browser with a redirect to the console.
struct ConsoleSignIn {
    let site: ConsoleSite

    func password(_ request: HTTPRequest, form: [String: String]) throws -> RouteResult {
        let (app, _) = try site.consoleApp()
        let body: JSONValue = .object(["email": .string(form["email"] ?? ""), "password": .string(form["password"] ?? ""),
                                       "transport": "cookie"])
        return call("/v1/auth/login", body: body, app: app, request: request).flatMap { response in
            .now(Self.finish(response, email: form["email"] ?? ""))
        }
    }

    func code(_ request: HTTPRequest, form: [String: String]) throws -> RouteResult {
        let (app, _) = try site.consoleApp()
        let challenge = form["challenge_token"] ?? ""
        let body: JSONValue = .object(["challenge_token": .string(challenge), "code": .string(form["code"] ?? ""),
                                       "transport": "cookie"])
        let email = form["email"] ?? ""
        return call("/v1/auth/mfa/verify", body: body, app: app, request: request).flatMap { response in
            guard response.status == 200 else {
                let (message, _) = ConsoleSite.problem(response)
                return .now(ConsoleSite.html(ConsolePages.codeForm(challenge: challenge, email: email,
                                                                   message: "That code was not accepted: " + message),
                                             status: response.status))
            }
            return .now(Self.finish(response, email: email))
        }
    }

    /// A passkey sign-in's options (for the typed email, or usernameless when none is typed),
    /// as the console app's `POST /v1/auth/passkey/options` answers them: console.js hands them
    /// to `navigator.credentials.get`.
    func passkeyOptions(_ request: HTTPRequest, form: [String: String]) throws -> RouteResult {
        let (app, _) = try site.consoleApp()
        let email = (form["email"] ?? "").trimmingCharacters(in: .whitespaces)
        let body: JSONValue = .object(email.isEmpty ? [:] : ["identifier": .string(email)])
        return call("/v1/auth/passkey/options", body: body, app: app, request: request).flatMap { .now(ConsoleSite.json($0)) }
    }

    /// The browser's assertion, as the console app's `POST /v1/auth/passkey/verify` with the
    /// cookie transport: the same session answer (or MFA challenge) as a password's.
    func passkey(_ request: HTTPRequest, form: [String: String]) throws -> RouteResult {
        let (app, _) = try site.consoleApp()
        guard case .value(let credential) = JSONValue.parseBody(Data((form["response"] ?? "").utf8)), case .object = credential else {
            return .now(ConsoleSite.html(ConsolePages.signIn(message: "The browser sent no passkey. Try again."), status: 422))
        }
        let body: JSONValue = .object(["flow_id": .string(form["flow_id"] ?? ""), "response": credential, "transport": "cookie"])
        return call("/v1/auth/passkey/verify", body: body, app: app, request: request).flatMap { response in
            .now(Self.finish(response, email: ""))
        }
    }

    /// The console app's sign-out (ends the session, clears the cookie), then the sign-in page.
    func signOut(_ request: HTTPRequest, user: ConsoleSite.Session) -> RouteResult {
        var headers = ["x-app-key": user.consoleApp.appKey, "cookie": request.header("cookie") ?? "",
                       "origin": request.header("origin") ?? ""]
        if let agent = request.header("user-agent") { headers["user-agent"] = agent }
        let core = HTTPRequest(method: "POST", path: "/v1/auth/sign-out", headers: headers, body: Data(),
                               clientIP: request.clientIP, peerIP: request.peerIP, requestId: request.requestId)
        return site.pipeline.run(core).flatMap { response in
            let cleared = response.headers.filter { $0.0.lowercased() == "set-cookie" }
            return .now(ConsoleSite.redirect("/console/sign-in",
                                             headers: cleared.isEmpty ? [("Set-Cookie", SessionObjectEdge.clearedCookie)] : cleared))
        }
    }

    /// A new request of the console app, as the browser's: its origin (the console's own, checked
    /// by `checkedForm`: a cookie sign-in must show it), address, agent and languages, never its
    /// cookie (the sign-in starts a new session).
    func call(_ path: String, body: JSONValue, app: AppRecord, request: HTTPRequest) -> RouteResult {
        var headers = ["x-app-key": app.appKey, "content-type": "application/json"]
        for name in ["origin", "user-agent", "accept-language"] { headers[name] = request.header(name) }
        let core = HTTPRequest(method: "POST", path: path, headers: headers, body: Data(body.serialized.utf8),
                               clientIP: request.clientIP, peerIP: request.peerIP, requestId: request.requestId)
        return site.pipeline.run(core)
    }

    /// A signed-in answer's cookie goes to the browser with the console; a challenge asks for
    /// the code; anything else is shown on the sign-in form.
    private static func finish(_ response: HTTPResponse, email: String) -> HTTPResponse {
        if response.status == 200 {
            let cookies = response.headers.filter { $0.0.lowercased() == "set-cookie" }
            return ConsoleSite.redirect("/console", headers: cookies)
        }
        if response.status == 202, case .value(let body) = JSONValue.parseBody(response.body),
           case .string(let challenge)? = body["mfa"]?["challenge_token"] {
            return ConsoleSite.html(ConsolePages.codeForm(challenge: challenge, email: email, message: nil))
        }
        let (message, _) = ConsoleSite.problem(response)
        return ConsoleSite.html(ConsolePages.signIn(message: message, email: email), status: response.status)
    }
}

/// The gateway's whole pipeline for a request made inside it (set once the gateway exists).
final class PipelineEntry: @unchecked Sendable {
    var handle: (@Sendable (HTTPRequest) -> RouteResult)?

    func run(_ request: HTTPRequest) -> RouteResult {
        handle?(request) ?? .now(.problem(.unavailable, requestId: request.requestId))
    }
}
