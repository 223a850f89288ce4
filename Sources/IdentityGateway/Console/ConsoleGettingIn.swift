import Foundation
import IdentityKit

/// Getting into the console without an operator (docs/console.md, "Getting in"):
/// - **An invitation link** (`/console/invitation?token=…`, from the invitation mail or
///   `identityctl console invite`): the page says which app and role it gives to which address;
///   the invitee chooses a password and is signed in, or, holding a console account already,
///   accepts and signs in as before. The token worker checks and spends the link
///   (`AdminV1.AcceptConsoleInvitation`); the password then signs in through the console app's
///   own `POST /v1/auth/login`, so the first session is an ordinary one. A spent, expired or
///   withdrawn link answers a page saying so and what to do.
/// - **A forgotten password**: the console app's own `POST /v1/auth/password/forgot` and
///   `/reset` (a 6-digit code by mail), sent through the gateway's whole pipeline.
/// Neither holds any authority: the link's token and the mailed code are the proofs, checked
/// by the token worker; every POST is origin-checked and rate-limited like the sign-in form.
struct ConsoleGettingIn {
    let site: ConsoleSite

    // MARK: - invitations

    func showInvitation(_ request: HTTPRequest) throws -> RouteResult {
        let token = request.query["token"] ?? ""
        guard ConsoleInvitationLink.isWellFormed(token) else { return .now(Self.unknownInvitation()) }
        let (app, _) = try site.consoleApp()
        return site.commands.send(AdminV1.ReadConsoleInvitation(token: token), expecting: AdminV1.ConsoleInvitation.self,
                                  appId: app.id, request: Self.anonymous(request), render: Self.carry)
            .flatMap { response in .now(Self.invitationPage(response, token: token)) }
    }

    func acceptInvitation(_ request: HTTPRequest, form: [String: String]) throws -> RouteResult {
        let token = form["token"] ?? ""
        guard ConsoleInvitationLink.isWellFormed(token) else { return .now(Self.unknownInvitation()) }
        let password = form["password"] ?? ""
        let (app, _) = try site.consoleApp()
        let command = AdminV1.AcceptConsoleInvitation(token: token, password: password, ip: request.clientIP)
        let site = self.site
        return site.commands.send(command, expecting: AdminV1.ConsoleInvitation.self, appId: app.id,
                                  request: Self.anonymous(request), render: Self.carry)
            .flatMap { response in
                if response.status == 422 {
                    // The password refused: the form again, with what the link offers and why.
                    let (message, fields) = ConsoleSite.problem(response)
                    return site.commands.send(AdminV1.ReadConsoleInvitation(token: token),
                                              expecting: AdminV1.ConsoleInvitation.self, appId: app.id,
                                              request: Self.anonymous(request), render: Self.carry)
                        .flatMap { read in
                            .now(Self.invitationForm(Self.invitation(read), token: token, errors: fields, message: message))
                        }
                }
                guard response.status == 200, let invitation = Self.invitation(response) else {
                    return .now(Self.invitationPage(response, token: token))
                }
                guard invitation.acceptedNow else { return .now(Self.invitationPage(response, token: token)) }
                if password.isEmpty {
                    // An account of that address existed: its owner signs in as before.
                    return .now(ConsoleSite.html(ConsolePages.signIn(
                        notice: "Invitation accepted: you hold the role \(invitation.role) in \(invitation.appName). "
                            + "Sign in to reach it.", email: invitation.email)))
                }
                return ConsoleSignIn(site: site).call(
                    "/v1/auth/login", body: .object(["email": .string(invitation.email), "password": .string(password),
                                                     "transport": "cookie"]), app: app, request: request)
                    .flatMap { signedIn in .now(Self.landing(signedIn, invitation: invitation, site: site)) }
            }
    }

    /// The page of a link, from the worker's answer (or its refusal).
    private static func invitationPage(_ response: HTTPResponse, token: String, errors: [String: [String]] = [:]) -> HTTPResponse {
        guard let invitation = invitation(response) else {
            if response.status == 404 { return unknownInvitation() }
            let (message, fields) = ConsoleSite.problem(response)
            if response.status == 422 { return invitationForm(nil, token: token, errors: fields, message: message) }
            return ConsoleSite.html(ConsoleHTML.page(title: "Invitation", user: nil, body: """
                <section class="card signin"><h1>Invitation</h1>\(ConsoleHTML.notice("error", message))</section>
                """), status: response.status)
        }
        switch invitation.state {
        case "open": return invitationForm(invitation, token: token, errors: errors, message: nil)
        case "accepted":
            return ended("This invitation was used already",
                         "Its link works once. Sign in with the console account of \(invitation.email).", status: 410)
        default:
            return ended("This invitation has expired",
                         "Invitation links work for 7 days. Ask an owner of \(invitation.appName) to invite "
                            + "\(invitation.email) again.", status: 410)
        }
    }

    /// The form of an open link: a password to choose, or (an account exists) just accepting.
    /// `invitation` is nil when a refused password brings the form back.
    private static func invitationForm(_ invitation: AdminV1.ConsoleInvitation?, token: String, errors: [String: [String]],
                                       message: String?) -> HTTPResponse {
        var body = "<section class=\"card signin\"><h1>Join the console</h1>"
        if let invitation {
            body += "<p id=\"invitation\">You are invited to <strong>\(ConsoleHTML.escape(invitation.appName))</strong> as "
                + "<strong class=\"role\">\(ConsoleHTML.escape(invitation.role))</strong>, "
                + "for <strong>\(ConsoleHTML.escape(invitation.email))</strong>.</p>"
        }
        if let message { body += ConsoleHTML.notice("error", "Not accepted: " + message) }
        body += "<form id=\"accept-invitation\" method=\"post\" action=\"/console/invitation\">"
            + "<input type=\"hidden\" name=\"token\" value=\"\(ConsoleHTML.escape(token))\">"
        if invitation?.hasAccount == true {
            body += "<p class=\"hint\">You have a console account with this address: accept, then sign in with it.</p>"
                + "<div class=\"actions\"><button id=\"accept\" type=\"submit\">Accept</button></div>"
        } else {
            if let email = invitation?.email {
                body += "<input type=\"hidden\" name=\"username\" autocomplete=\"username\" value=\"\(ConsoleHTML.escape(email))\">"
            }
            body += "<label for=\"password\">Choose a password</label>"
                + "<input id=\"password\" name=\"password\" type=\"password\" autocomplete=\"new-password\" required minlength=\"8\">"
                + ConsoleHTML.fieldErrors(errors["password"] ?? [])
                + "<p class=\"hint\">At least 8 characters; a passphrase of a few words is best. You can add a passkey "
                + "and two-step verification on your Account page next.</p>"
                + "<div class=\"actions\"><button id=\"accept\" type=\"submit\">Create account and sign in</button></div>"
        }
        body += "</form></section>"
        return ConsoleSite.html(ConsoleHTML.page(title: "Join the console", user: nil, body: body),
                                status: message == nil ? 200 : 422)
    }

    private static func unknownInvitation() -> HTTPResponse {
        ended("This invitation link does not work",
              "It may have been withdrawn (the member was removed), or the link was not copied whole. "
                + "Open the link from the invitation mail again, or ask the app's owner to invite you again.", status: 404)
    }

    private static func ended(_ title: String, _ text: String, status: Int) -> HTTPResponse {
        ConsoleSite.html(ConsoleHTML.page(title: title, user: nil, body: """
            <section class="card signin"><h1 id="invitation-ended">\(ConsoleHTML.escape(title))</h1>
            \(ConsoleHTML.notice("info", text))
            <p><a href="/console/sign-in">Sign in</a> · <a href="/console/reset">Forgot your password?</a></p></section>
            """), status: status)
    }

    /// Signed in with the new password: the cookie goes to the browser with the invited app's
    /// Connect page (its key and how to reach it), or the Account page when the console needs two-step verification set up first.
    private static func landing(_ response: HTTPResponse, invitation: AdminV1.ConsoleInvitation, site: ConsoleSite) -> HTTPResponse {
        guard response.status == 200 else {
            let (message, _) = ConsoleSite.problem(response)
            return ConsoleSite.html(ConsolePages.signIn(
                notice: "Your console account is made. Sign in with it (\(message)).", email: invitation.email))
        }
        let cookies = response.headers.filter { $0.0.lowercased() == "set-cookie" }
        let mustSetUpTwoStep = (try? site.console.requiresStrongSignIn()) ?? true
        return ConsoleSite.redirect(mustSetUpTwoStep ? "/console/account"
                                        : "/console/apps/\(ConsoleHTML.component(invitation.appId))/connect", headers: cookies)
    }

    // MARK: - password reset

    static func resetPage(message: String? = nil, email: String = "", status: Int = 200) -> HTTPResponse {
        ConsoleSite.html(ConsoleHTML.page(title: "Reset your password", user: nil, body: """
            <section class="card signin"><h1>Reset your password</h1>
            \(message.map { ConsoleHTML.notice("error", $0) } ?? "")
            <p class="hint">We mail a 6-digit code to your console account's address.</p>
            <form id="reset" method="post" action="/console/reset">
            <label for="email">Email</label>
            <input id="email" name="email" type="email" autocomplete="username" required maxlength="254" value="\(ConsoleHTML.escape(email))">
            <div class="actions"><button id="send-code" type="submit">Send code</button></div>
            </form><p><a href="/console/sign-in">Back to sign-in</a></p></section>
            """), status: status)
    }

    static func resetCodePage(email: String, message: String? = nil, errors: [String: [String]] = [:], status: Int = 200) -> HTTPResponse {
        ConsoleSite.html(ConsoleHTML.page(title: "Reset your password", user: nil, body: """
            <section class="card signin"><h1>Reset your password</h1>
            \(message.map { ConsoleHTML.notice("error", $0) }
                ?? ConsoleHTML.notice("info", "If \(email) has a console account, a code is on its way to it."))
            <form id="reset-confirm" method="post" action="/console/reset/confirm">
            <input type="hidden" name="email" value="\(ConsoleHTML.escape(email))">
            <label for="code">Code from the mail</label>
            <input id="code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" required maxlength="32">
            \(ConsoleHTML.fieldErrors(errors["code"] ?? []))
            <label for="password">New password</label>
            <input id="password" name="password" type="password" autocomplete="new-password" required minlength="8">
            \(ConsoleHTML.fieldErrors(errors["password"] ?? []))
            <div class="actions"><button id="reset-password" type="submit">Set password</button></div>
            </form></section>
            """), status: status)
    }

    func sendResetCode(_ request: HTTPRequest, form: [String: String]) throws -> RouteResult {
        let (app, _) = try site.consoleApp()
        let email = (form["email"] ?? "").trimmingCharacters(in: .whitespaces)
        return ConsoleSignIn(site: site).call(DeclaredOperation.forgotPassword.pattern, body: .object(["email": .string(email)]),
                                              app: app, request: request)
            .flatMap { response in
                if (200..<300).contains(response.status) { return .now(Self.resetCodePage(email: email)) }
                let (message, _) = ConsoleSite.problem(response)
                return .now(Self.resetPage(message: message, email: email, status: response.status))
            }
    }

    func reset(_ request: HTTPRequest, form: [String: String]) throws -> RouteResult {
        let (app, _) = try site.consoleApp()
        let email = form["email"] ?? ""
        let body: JSONValue = .object(["email": .string(email), "code": .string((form["code"] ?? "").trimmingCharacters(in: .whitespaces)),
                                       "password": .string(form["password"] ?? "")])
        return ConsoleSignIn(site: site).call(DeclaredOperation.resetPassword.pattern, body: body, app: app, request: request)
            .flatMap { response in
                guard (200..<300).contains(response.status) else {
                    let (message, fields) = ConsoleSite.problem(response)
                    return .now(Self.resetCodePage(email: email, message: "Not changed: " + message, errors: fields,
                                                   status: response.status))
                }
                return .now(ConsoleSite.html(ConsolePages.signIn(
                    notice: "Your password is changed, and every session of your console account has ended. Sign in with it.",
                    email: email)))
            }
    }

    // MARK: - helpers

    /// The reply as JSON, read back by `invitation` (the sender renders replies as responses).
    @Sendable private static func carry(_ reply: AdminV1.ConsoleInvitation) -> HTTPResponse {
        .data(.object(["state": .string(reply.state), "app_id": .string(reply.appId), "app_name": .string(reply.appName),
                       "email": .string(reply.email), "role": .string(reply.role), "has_account": .bool(reply.hasAccount),
                       "accepted_now": .bool(reply.acceptedNow)]))
    }

    private static func invitation(_ response: HTTPResponse) -> AdminV1.ConsoleInvitation? {
        guard response.status == 200, let data = SessionObjectEdge.data(response),
              case .string(let state)? = data["state"], case .string(let appId)? = data["app_id"],
              case .string(let appName)? = data["app_name"], case .string(let email)? = data["email"],
              case .string(let role)? = data["role"], case .bool(let hasAccount)? = data["has_account"],
              case .bool(let acceptedNow)? = data["accepted_now"] else { return nil }
        return AdminV1.ConsoleInvitation(state: state, appId: appId, appName: appName, email: email, role: role,
                                         hasAccount: hasAccount, acceptedNow: acceptedNow)
    }

    /// The browser's request without its credentials: the link's token is the only authority,
    /// and a console session the browser may hold must not travel as the command's caller.
    private static func anonymous(_ request: HTTPRequest) -> HTTPRequest {
        var headers = request.headers
        headers["authorization"] = nil
        headers["cookie"] = nil
        return HTTPRequest(method: request.method, path: request.path, headers: headers, body: Data(),
                           clientIP: request.clientIP, peerIP: request.peerIP, requestId: request.requestId)
    }
}
