import Foundation
import IdentityKit

/// An app's Users pages: search (the admin API's own `UserProfileStore` read, by email, phone or
/// username prefix, 25 a page), a user's profile, and disable or enable, each after a
/// confirmation page, as the admin API's `SetUserDisabled` command. Disabling needs a fresh
/// sign-in: it ends every session of the user at once.
struct ConsoleUsers {
    let site: ConsoleSite
    static let pageSize = 25

    func list(_ request: HTTPRequest, user: ConsoleSite.Session, membership: ConsoleStore.Membership) throws -> String {
        let by = ["email", "phone", "username"].first { $0 == request.query["by"] } ?? "email"
        let q = String((request.query["q"] ?? "").prefix(254)).filter { $0 != "\u{0}" }
        var filter = UserProfileStore.Filter(limit: Self.pageSize)
        if !q.isEmpty {
            switch by {
            case "phone": filter.phonePrefix = q
            case "username": filter.usernamePrefix = q
            default: filter.emailPrefix = q
            }
        }
        if let cursor = request.query["cursor"], cursor.utf8.count == 26,
           cursor.utf8.allSatisfy({ ($0 >= 48 && $0 <= 57) || ($0 >= 97 && $0 <= 122) }) {
            filter.beforeUid = cursor
        }
        let page = try site.users.list(appId: membership.appId, filter)
        let base = "/console/apps/\(ConsoleHTML.component(membership.appId))/users"
        let options = [("email", "Email"), ("phone", "Phone"), ("username", "Username")].map { value, label in
            "<option value=\"\(value)\"\(value == by ? " selected" : "")>\(label)</option>"
        }.joined()
        var html = """
            <h1>Users</h1>
            <form class="search" method="get" action="\(base)">
            <div><label for="by">Search by</label><select id="by" name="by">\(options)</select></div>
            <div class="grow"><label for="q">Starts with</label><input id="q" name="q" type="search" value="\(ConsoleHTML.escape(q))"></div>
            <div><button type="submit" id="search">Search</button></div>
            </form>
            """
        if page.isEmpty {
            html += ConsoleHTML.notice("info", q.isEmpty ? "This app has no users yet." : "No user matches.")
        } else {
            html += "<table id=\"users\"><thead><tr><th>Email</th><th>Phone</th><th>Username</th><th>Providers</th><th>State</th><th>Created</th></tr></thead><tbody>"
            for profile in page {
                let u = profile.message
                html += "<tr><td><a href=\"\(base)/\(ConsoleHTML.component(u.uid))\">\(ConsoleHTML.escape(u.email ?? u.uid))</a></td>"
                    + "<td>\(ConsoleHTML.escape(u.phone ?? ""))</td><td>\(ConsoleHTML.escape(u.username ?? ""))</td>"
                    + "<td>\(ConsoleHTML.escape(u.providers.joined(separator: ", ")))</td>"
                    + "<td>\(Self.state(u.disabled))</td><td>\(ConsoleHTML.escape(u.createdAt))</td></tr>"
            }
            html += "</tbody></table>"
            if page.count == Self.pageSize, let last = page.last?.message.uid {
                html += "<p class=\"pager\"><a id=\"next-page\" href=\"\(base)?by=\(by)&amp;q=\(ConsoleHTML.component(q))&amp;cursor=\(last)\">Next page →</a></p>"
            }
        }
        return ConsoleHTML.page(title: "Users", user: user, app: (membership.appId, membership.appName, "users"), body: html)
    }

    func show(user: ConsoleSite.Session, membership: ConsoleStore.Membership, uid: String, notice: String?) throws -> String {
        guard uid.utf8.count <= 64, let profile = try site.users.find(appId: membership.appId, uid: uid) else {
            throw ConsoleSite.Refusal.notFound
        }
        let u = profile.message
        let facts: [(String, String)] = [
            ("User id", u.uid), ("Email", (u.email ?? "—") + (u.email == nil ? "" : u.emailVerified ? " (verified)" : " (not verified)")),
            ("Phone", u.phone ?? "—"), ("Username", u.username ?? "—"),
            ("Name", [u.firstName, u.lastName].compactMap { $0 }.joined(separator: " ")),
            ("Sign-in methods", ([u.hasPassword ? "password" : nil].compactMap { $0 } + u.providers).joined(separator: ", ")),
            ("Two-step verification", u.mfaEnabled ? "on" : "off"), ("Guest", u.isGuest ? "yes" : "no"),
            ("Created", u.createdAt),
        ]
        var html = "<h1>\(ConsoleHTML.escape(u.email ?? u.uid))</h1>" + (notice ?? "")
        html += "<section class=\"card\"><dl class=\"facts\">"
            + facts.map { "<dt>\($0.0)</dt><dd>\(ConsoleHTML.escape($0.1))</dd>" }.joined()
            + "<dt>State</dt><dd id=\"user-state\">\(Self.state(u.disabled))</dd></dl></section>"
        if membership.role.mayChange {
            let action = u.disabled ? "enable" : "disable"
            html += "<form method=\"post\" action=\"/console/apps/\(ConsoleHTML.component(membership.appId))/users/\(ConsoleHTML.component(u.uid))/\(action)\">"
                + ConsoleHTML.csrfField(user)
                + "<button id=\"\(action)\" type=\"submit\"\(u.disabled ? "" : " class=\"danger\"")>\(u.disabled ? "Enable user" : "Disable user")…</button></form>"
        }
        html += "<p><a href=\"/console/apps/\(ConsoleHTML.component(membership.appId))/users\">← All users</a></p>"
        return ConsoleHTML.page(title: u.email ?? u.uid, user: user, app: (membership.appId, membership.appName, "users"), body: html)
    }

    /// Without `confirm=yes`, the confirmation page (a form of its own, with the token); with it,
    /// the command, after the fresh sign-in disabling needs and the audit row.
    func setDisabled(_ request: HTTPRequest, user: ConsoleSite.Session, membership: ConsoleStore.Membership, uid: String,
                     disabled: Bool, form: [String: String]) throws -> RouteResult {
        guard uid.utf8.count <= 64, let profile = try site.users.find(appId: membership.appId, uid: uid) else {
            throw ConsoleSite.Refusal.notFound
        }
        let name = profile.message.email ?? uid
        let action = disabled ? "disable" : "enable"
        guard form["confirm"] == "yes" else {
            let consequence = disabled
                ? "They are signed out everywhere at once and cannot sign in until enabled again."
                : "They can sign in again."
            return .now(ConsoleSite.html(ConsoleHTML.page(
                title: "Confirm", user: user, app: (membership.appId, membership.appName, "users"), body: """
                    <section class="card"><h1>\(disabled ? "Disable" : "Enable") \(ConsoleHTML.escape(name))?</h1>
                    <p>\(consequence)</p>
                    <form method="post" action="\(ConsoleHTML.escape(request.path))">\(ConsoleHTML.csrfField(user))
                    <input type="hidden" name="confirm" value="yes">
                    <div class="actions"><button id="confirm" type="submit"\(disabled ? " class=\"danger\"" : "")>Yes, \(action)</button>
                    <a class="button secondary" href="/console/apps/\(ConsoleHTML.component(membership.appId))/users/\(ConsoleHTML.component(uid))">Cancel</a></div>
                    </form></section>
                    """)))
        }
        if disabled { try site.requireFreshSignIn(request, user: user) }
        try site.audit("admin.users." + action, appId: membership.appId, user: user, target: "user:" + uid, request: request,
                       detail: ["via": "console"])
        let command = AdminV1.SetUserDisabled(appId: membership.appId, uid: uid, disabled: disabled, actor: "console:" + user.uid,
                                              ip: request.clientIP)
        let site = self.site
        return site.send(command, expecting: TokenV1.UserResult.self, appId: membership.appId, user: user, request: request) { _ in
            .object([:])
        }.flatMap { response in
            let notice = response.status == 200
                ? ConsoleHTML.notice("ok", disabled ? "Disabled: every session of this user has ended." : "Enabled.")
                : ConsoleHTML.notice("error", "Not changed: " + ConsoleSite.problem(response).message)
            do {
                return .now(ConsoleSite.html(try ConsoleUsers(site: site).show(user: user, membership: membership, uid: uid, notice: notice),
                                             status: response.status == 200 ? 200 : response.status))
            } catch {
                return .now(ConsoleSite.redirect("/console/apps/\(ConsoleHTML.component(membership.appId))/users"))
            }
        }
    }

    static func state(_ disabled: Bool) -> String {
        disabled ? "<span class=\"badge off\">disabled</span>" : "<span class=\"badge on\">active</span>"
    }
}
