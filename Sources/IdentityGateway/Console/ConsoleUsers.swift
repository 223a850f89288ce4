import Foundation
import IdentityKit

/// An app's Users pages: search (the admin API's own `UserProfileStore` read, by email, phone or
/// username prefix, 25 a page), and a user's page: profile, live sessions (the admin API's own
/// `SessionStore.live` read), passkeys (the admin API's `ListUserPasskeys` command: only the token
/// worker reads them) and, for owners and admins, the buttons of `ConsoleUserActions`.
struct ConsoleUsers {
    let site: ConsoleSite
    static let pageSize = 25

    /// `notice` above the list; `creating`: the New user form's values and problems after a refusal.
    func list(_ request: HTTPRequest, user: ConsoleSite.Session, membership: ConsoleStore.Membership, notice: String? = nil,
              creating: (values: [String: String], errors: [String: [String]])? = nil) throws -> String {
        let by: String = ["email", "phone", "username", "uid"].first { $0 == request.query["by"] } ?? "email"
        let q = String((request.query["q"] ?? "").prefix(254)).filter { $0 != "\u{0}" }
        // One more than a page, to know whether there is a page further in the direction read.
        var filter = UserProfileStore.Filter(limit: Self.pageSize + 1)
        if !q.isEmpty {
            switch by {
            case "phone": filter.phonePrefix = q
            case "username": filter.usernamePrefix = q
            case "uid": break
            default: filter.emailPrefix = q
            }
        }
        let isUid = { (text: String?) -> Bool in
            guard let text, text.utf8.count == 26 else { return false }
            return text.utf8.allSatisfy { ($0 >= 48 && $0 <= 57) || ($0 >= 97 && $0 <= 122) }
        }
        if isUid(request.query["cursor"]) { filter.beforeUid = request.query["cursor"] }
        else if isUid(request.query["after"]) { filter.afterUid = request.query["after"] }
        var page: [UserProfile]
        if by == "uid", !q.isEmpty {
            page = (q.utf8.count <= 64 ? try site.users.find(appId: membership.appId, uid: q) : nil).map { [$0] } ?? []
        } else {
            page = try site.users.list(appId: membership.appId, filter)
        }
        // Older pages follow when this one is full going back in time, or when it was reached
        // going forward; newer ones precede when it was reached going back, or is full going forward.
        let full = page.count > Self.pageSize
        if full { page = filter.afterUid == nil ? Array(page.prefix(Self.pageSize)) : Array(page.suffix(Self.pageSize)) }
        let hasOlder = filter.afterUid == nil ? full : true
        let hasNewer = filter.afterUid == nil ? filter.beforeUid != nil : full
        let base = "/console/apps/\(ConsoleHTML.component(membership.appId))/users"
        let options = [("email", "Email"), ("phone", "Phone"), ("username", "Username"), ("uid", "User id")].map { value, label in
            "<option value=\"\(value)\"\(value == by ? " selected" : "")>\(label)</option>"
        }.joined()
        var html = """
            <h1>Users</h1>\(notice ?? "")
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
            let search = "\(base)?by=\(by)&amp;q=\(ConsoleHTML.component(q))"
            var pager: [String] = []
            if hasNewer, let first = page.first?.message.uid {
                pager.append("<a id=\"previous-page\" href=\"\(search)&amp;after=\(first)\">← Newer</a>")
            }
            if hasOlder, let last = page.last?.message.uid {
                pager.append("<a id=\"next-page\" href=\"\(search)&amp;cursor=\(last)\">Older →</a>")
            }
            if !pager.isEmpty { html += "<p class=\"pager\">" + pager.joined(separator: " ") + "</p>" }
        }
        if membership.role.mayChange { html += ConsoleUserCreation.form(user: user, membership: membership, creating: creating) }
        return ConsoleHTML.page(title: "Users", user: user, app: (membership.appId, membership.appName, "users"), body: html)
    }

    /// The user's page with their passkeys, read first (`status`: the page's HTTP status).
    func showing(_ request: HTTPRequest, user: ConsoleSite.Session, membership: ConsoleStore.Membership, uid: String,
                 notice: String?, status: Int = 200) throws -> RouteResult {
        guard uid.utf8.count <= 64, try site.users.find(appId: membership.appId, uid: uid) != nil else {
            throw ConsoleSite.Refusal.notFound
        }
        let command = AdminV1.ListUserPasskeys(appId: membership.appId, uid: uid)
        let site = self.site
        return site.send(command, expecting: TokenV1.PasskeyList.self, appId: membership.appId, user: user, request: request) {
            .array($0.passkeys.map { passkey in
                .object(["id": .string(passkey.id), "name": .string(passkey.name), "created_at": .string(passkey.createdAt),
                         "last_used_at": passkey.lastUsedAt.map(JSONValue.string) ?? .null])
            })
        }
        .flatMap { response in
            let passkeys: [JSONValue]? = if response.status == 200, case .array(let list)? = ConsoleSite.data(response) { list } else { nil }
            do {
                return .now(ConsoleSite.html(try ConsoleUsers(site: site).show(user: user, membership: membership, uid: uid,
                                                                                notice: notice, passkeys: passkeys),
                                             status: status))
            } catch {
                return .now(ConsoleSite.redirect("/console/apps/\(ConsoleHTML.component(membership.appId))/users"))
            }
        }
    }

    /// `passkeys`: the admin API's answer, nil when it could not be read.
    func show(user: ConsoleSite.Session, membership: ConsoleStore.Membership, uid: String, notice: String?,
              passkeys: [JSONValue]?) throws -> String {
        guard uid.utf8.count <= 64, let profile = try site.users.find(appId: membership.appId, uid: uid) else {
            throw ConsoleSite.Refusal.notFound
        }
        let u = profile.message
        let facts: [(String, String)] = [
            ("User id", u.uid), ("Email", (u.email ?? "—") + (u.email == nil ? "" : u.emailVerified ? " (verified)" : " (not verified)")),
            ("Phone", u.phone ?? "—"), ("Username", u.username ?? "—"),
            ("Name", [u.firstName, u.lastName].compactMap { $0 }.joined(separator: " ")),
            ("Sign-in methods", Self.methods(password: u.hasPassword, providers: u.providers)),
            ("Two-step verification", u.mfaEnabled ? "on" : "off"), ("Guest", u.isGuest ? "yes" : "no"),
            ("Created", u.createdAt),
        ]
        var html = "<h1>\(ConsoleHTML.escape(u.email ?? u.uid))</h1>" + (notice ?? "")
        html += "<section class=\"card\"><dl class=\"facts\">"
            + facts.map { "<dt>\($0.0)</dt><dd>\(ConsoleHTML.escape($0.1))</dd>" }.joined()
            + "<dt>State</dt><dd id=\"user-state\">\(Self.state(u.disabled))</dd></dl></section>"
        let base = "/console/apps/\(ConsoleHTML.component(membership.appId))/users/\(ConsoleHTML.component(u.uid))"
        let editable = membership.role.mayChange
        /// A button opening an action's confirmation page (`ConsoleUserActions`).
        func button(_ action: ConsoleUserActions.Action, id: String, label: String) -> String {
            "<form class=\"inline\" method=\"post\" action=\"\(base)/\(action.path)\">" + ConsoleHTML.csrfField(user)
                + "<button id=\"\(ConsoleHTML.escape(id))\" type=\"submit\"\(action.destructive ? " class=\"danger\"" : "")>\(label)…</button></form>"
        }
        let sessions = try site.sessions.live(appId: membership.appId, uid: u.uid)
        html += "<section class=\"card\"><h2>Sessions</h2>"
        if sessions.isEmpty {
            html += "<p class=\"hint\" id=\"no-sessions\">No live session: this user is signed in nowhere.</p>"
        } else {
            html += "<table id=\"sessions\"><thead><tr><th>Signed in</th><th>Last seen</th><th>IP</th><th>Device</th>"
                + "<th>Methods</th><th></th></tr></thead><tbody>"
            for session in sessions {
                html += "<tr data-session=\"\(ConsoleHTML.escape(session.id))\">"
                    + "<td>\(ConsoleHTML.escape(Timestamp.rfc3339(microsecondsSinceEpoch: session.createdAtMicros)))</td>"
                    + "<td>\(ConsoleHTML.escape(Timestamp.rfc3339(microsecondsSinceEpoch: session.lastSeenAtMicros)))</td>"
                    + "<td>\(ConsoleHTML.escape(session.ip ?? "—"))</td><td>\(ConsoleHTML.escape(session.userAgent ?? "—"))</td>"
                    + "<td>\(ConsoleHTML.escape(session.amr.joined(separator: ", ")))</td>"
                    + "<td>\(editable ? button(.endSession(session.id), id: "end-" + session.id, label: "End") : "")</td></tr>"
            }
            html += "</tbody></table>"
        }
        if editable, !sessions.isEmpty {
            html += "<div class=\"actions\">" + button(.endSessions, id: "end-sessions", label: "End all sessions") + "</div>"
        }
        html += "</section>" + Self.passkeys(passkeys)
        if editable {
            html += "<section class=\"card\"><h2>Actions</h2><div class=\"actions\">"
                + "<a class=\"button secondary\" id=\"edit\" href=\"\(base)/edit\">Edit…</a>"
                + (u.disabled ? button(.enable, id: "enable", label: "Enable user") : button(.disable, id: "disable", label: "Disable user"))
                + (u.mfaEnabled ? button(.resetMfa, id: "reset-mfa", label: "Reset two-step verification") : "")
                + button(.delete, id: "delete", label: "Delete user")
                + "</div></section>"
        }
        html += "<p><a href=\"/console/apps/\(ConsoleHTML.component(membership.appId))/users\">← All users</a></p>"
        return ConsoleHTML.page(title: u.email ?? u.uid, user: user, app: (membership.appId, membership.appName, "users"), body: html)
    }

    /// The user's passkeys: name, when added and last used (the admin API has no removal: the user
    /// removes their own).
    static func passkeys(_ passkeys: [JSONValue]?) -> String {
        func text(_ value: JSONValue?) -> String { if case .string(let s)? = value, !s.isEmpty { s } else { "—" } }
        var html = "<section class=\"card\"><h2>Passkeys</h2>"
        guard let passkeys else {
            return html + ConsoleHTML.notice("error", "The passkeys could not be read. Reload the page to try again.") + "</section>"
        }
        guard !passkeys.isEmpty else { return html + "<p class=\"hint\" id=\"no-passkeys\">No passkey.</p></section>" }
        html += "<table id=\"passkeys\"><thead><tr><th>Name</th><th>Created</th><th>Last used</th></tr></thead><tbody>"
        for passkey in passkeys {
            html += "<tr data-passkey=\"\(ConsoleHTML.escape(text(passkey["id"])))\"><td>\(ConsoleHTML.escape(text(passkey["name"])))</td>"
                + "<td>\(ConsoleHTML.escape(text(passkey["created_at"])))</td><td>\(ConsoleHTML.escape(text(passkey["last_used_at"])))</td></tr>"
        }
        return html + "</tbody></table></section>"
    }

    /// The password once, then each provider (the profile may list `password` among them too).
    static func methods(password: Bool, providers: [String]) -> String {
        var names: [String] = password ? ["password"] : []
        for provider in providers where !names.contains(provider) { names.append(provider) }
        return names.joined(separator: ", ")
    }

    static func state(_ disabled: Bool) -> String {
        disabled ? "<span class=\"badge off\">disabled</span>" : "<span class=\"badge on\">active</span>"
    }
}
