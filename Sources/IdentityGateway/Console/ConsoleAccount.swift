import Foundation
import IdentityKit

/// The signed-in console user's own Account page: two-step verification (an authenticator app)
/// and passkeys. Every read and change is the console app's own `/v1/me` route, sent through the
/// gateway's whole pipeline with the session's cookie as the browser's request, so its rules are
/// the service's own: a sign-in of the last 5 minutes (at `aal` 2 once MFA is on) to enrol, the
/// last way in kept, rate limits, security alerts. The console keeps nothing of it: the TOTP
/// secret is on the one page that shows it, the backup codes on the one that follows.
struct ConsoleAccount {
    let site: ConsoleSite

    /// The answer for `/console/account/<rest>`, nil when there is no such page.
    func route(_ method: String, _ rest: [String], _ request: HTTPRequest, user: ConsoleSite.Session,
               form: [String: String]) -> RouteResult? {
        func path(_ pattern: String...) -> [String]? { ConsoleSite.match(rest, pattern) }
        if method == "GET", rest.isEmpty || rest == [""] { return show(request, user: user, notice: nil) }
        guard method == "POST" else { return nil }
        if path("totp") != nil { return startTotp(request, user: user) }
        if path("totp", "confirm") != nil { return confirmTotp(request, user: user, code: form["code"] ?? "") }
        if path("passkeys", "options") != nil {
            return call("POST", "/v1/me/passkeys/options", request, user: user).flatMap { .now(ConsoleSite.json($0)) }
        }
        if path("passkeys") != nil { return registerPasskey(request, user: user, form: form) }
        if let found = path("passkeys", "*", "remove"), Self.isPasskeyId(found[0]) {
            return removePasskey(found[0], request, user: user)
        }
        return nil
    }

    // MARK: - the page

    func show(_ request: HTTPRequest, user: ConsoleSite.Session, notice: String?, status: Int = 200) -> RouteResult {
        let account = self
        return call("GET", "/v1/me/mfa", request, user: user).flatMap { mfa in
            account.call("GET", "/v1/me/passkeys", request, user: user).flatMap { passkeys in
                .now(ConsoleSite.html(ConsoleAccountPages.account(
                    user, mfa: mfa.status == 200 ? SessionObjectEdge.data(mfa) : nil,
                    passkeys: passkeys.status == 200 ? SessionObjectEdge.data(passkeys) : nil, notice: notice), status: status))
            }
        }
    }

    // MARK: - authenticator app

    private func startTotp(_ request: HTTPRequest, user: ConsoleSite.Session) -> RouteResult {
        let account = self
        return call("POST", "/v1/me/mfa/totp", request, user: user).flatMap { response in
            guard response.status == 200, let data = SessionObjectEdge.data(response),
                  case .string(let secret)? = data["secret"], case .string(let svg)? = data["qr_svg"] else {
                return account.refused(response, user: user, request: request, what: "Not started")
            }
            return .now(ConsoleSite.html(ConsoleAccountPages.totpSetup(user, secret: secret, qrSVG: svg, message: nil)))
        }
    }

    private func confirmTotp(_ request: HTTPRequest, user: ConsoleSite.Session, code: String) -> RouteResult {
        let body: JSONValue = .object(["code": .string(code.trimmingCharacters(in: .whitespaces))])
        return call("POST", "/v1/me/mfa/totp/confirm", body: body, request, user: user).flatMap { response in
            guard response.status == 200, case .array(let codes)? = SessionObjectEdge.data(response)?["backup_codes"] else {
                if Self.code(response) == ServiceError.reauthRequired.code { return .now(ConsoleSite.signInAgain(user)) }
                let (message, _) = ConsoleSite.problem(response)
                return .now(ConsoleSite.html(ConsoleAccountPages.totpSetup(
                    user, secret: nil, qrSVG: nil, message: "That code was not accepted: " + message), status: response.status))
            }
            return .now(ConsoleSite.html(ConsoleAccountPages.backupCodes(user, codes: codes.compactMap {
                if case .string(let code) = $0 { return code } else { return nil }
            })))
        }
    }

    // MARK: - passkeys

    /// The browser's new credential (console.js, `navigator.credentials.create` with the options
    /// of `passkeys/options`), as `POST /v1/me/passkeys`.
    private func registerPasskey(_ request: HTTPRequest, user: ConsoleSite.Session, form: [String: String]) -> RouteResult {
        guard case .value(let credential) = JSONValue.parseBody(Data((form["response"] ?? "").utf8)),
              case .object = credential else {
            return show(request, user: user, notice: ConsoleHTML.notice("error", "No passkey was made: the browser sent none. Try again."),
                        status: 422)
        }
        var body: [String: JSONValue] = ["response": credential]
        let name = (form["name"] ?? "").trimmingCharacters(in: .whitespaces)
        if !name.isEmpty { body["name"] = .string(name) }
        let account = self
        return call("POST", "/v1/me/passkeys", body: .object(body), request, user: user).flatMap { response in
            guard response.status == 201 else { return account.refused(response, user: user, request: request, what: "Not added") }
            return account.show(request, user: user, notice: ConsoleHTML.notice("ok", "Passkey added. You can sign in with it."))
        }
    }

    private func removePasskey(_ id: String, _ request: HTTPRequest, user: ConsoleSite.Session) -> RouteResult {
        let account = self
        return call("DELETE", "/v1/me/passkeys/" + id, request, user: user).flatMap { response in
            guard response.status == 204 else { return account.refused(response, user: user, request: request, what: "Not removed") }
            return account.show(request, user: user, notice: ConsoleHTML.notice("ok", "Passkey removed."))
        }
    }

    /// Passkey ids as the API makes them; anything else never reaches a path.
    static func isPasskeyId(_ id: String) -> Bool {
        (1...100).contains(id.utf8.count) && id.utf8.allSatisfy { byte in
            (48...57).contains(byte) || (65...90).contains(byte) || (97...122).contains(byte) || byte == 45 || byte == 95
        }
    }

    // MARK: - helpers

    /// A refused change: the page asking for a new sign-in when the API wants fresh proof, else
    /// the Account page with the API's reason.
    private func refused(_ response: HTTPResponse, user: ConsoleSite.Session, request: HTTPRequest, what: String) -> RouteResult {
        if Self.code(response) == ServiceError.reauthRequired.code { return .now(ConsoleSite.signInAgain(user)) }
        let (message, _) = ConsoleSite.problem(response)
        return show(request, user: user, notice: ConsoleHTML.notice("error", "\(what): \(message)"), status: response.status)
    }

    private static func code(_ response: HTTPResponse) -> String? {
        guard case .value(let body) = JSONValue.parseBody(response.body), case .string(let code)? = body["code"] else { return nil }
        return code
    }

    /// The console app's `path` as the signed-in user's own request: their session cookie, the
    /// browser's origin (already the console's: `checkedForm`), address, agent and languages.
    private func call(_ method: String, _ path: String, body: JSONValue? = nil, _ request: HTTPRequest,
                      user: ConsoleSite.Session) -> RouteResult {
        var headers = ["x-app-key": user.consoleApp.appKey, "cookie": SessionObjectEdge.cookieName + "=" + user.sessionToken]
        if method != "GET", let origin = request.header("origin") { headers["origin"] = origin }
        if body != nil { headers["content-type"] = "application/json" }
        for name in ["user-agent", "accept-language"] { headers[name] = request.header(name) }
        let core = HTTPRequest(method: method, path: path, headers: headers, body: body.map { Data($0.serialized.utf8) } ?? Data(),
                               clientIP: request.clientIP, peerIP: request.peerIP, requestId: request.requestId)
        return site.pipeline.run(core)
    }
}
