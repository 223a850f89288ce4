import Foundation
import IdentityKit

/// An app's Members page: who holds a role in the app (email, role, who invited them and when,
/// whether a verified console account of that email exists yet), seen by every member. An
/// owner's page also invites an email with a role, changes a member's role and removes one,
/// each as a console command the token worker carries out (`AdminV1.InviteConsoleMember`, …):
/// it alone decides that the caller is an owner (a forged form from an admin or viewer is sent
/// like any other and refused there, 403) and that the app keeps an owner (409). Giving or
/// taking `owner` needs a fresh sign-in; invitations have a limit of their own per account.
struct ConsoleMembers {
    let site: ConsoleSite

    static let roles: [ConsoleStore.Role] = [.viewer, .admin, .owner]

    func show(user: ConsoleSite.Session, membership: ConsoleStore.Membership, notice: String?,
              invite: (email: String, role: String, errors: [String]) = ("", "viewer", [])) throws -> String {
        let members = try site.console.members(consoleAppId: user.consoleApp.id, appId: membership.appId)
        let base = "/console/apps/\(ConsoleHTML.component(membership.appId))/members"
        let owner = membership.role == .owner
        var html = "<h1>Members</h1>" + (notice ?? "")
        html += "<p class=\"hint\">A role counts for the console account whose email is that address, once verified. "
            + "Owners manage members; admins change the app; viewers only look.</p>"
        html += "<table id=\"members\"><thead><tr><th>Email</th><th>Role</th><th>Invited by</th><th>Since</th>"
            + "<th>Console account</th>\(owner ? "<th></th>" : "")</tr></thead><tbody>"
        for member in members {
            let email = ConsoleHTML.escape(member.email)
            html += "<tr data-email=\"\(email)\"><td>\(email)</td>"
                + "<td><span class=\"badge role\">\(member.role.rawValue)</span></td>"
                + "<td>\(ConsoleHTML.escape(member.invitedBy))</td>"
                + "<td>\(ConsoleHTML.escape(Timestamp.rfc3339(microsecondsSinceEpoch: member.createdAtMicros)))</td>"
                + "<td>\(member.hasAccount ? "<span class=\"badge on account\">yes</span>" : "<span class=\"badge account\">not yet</span>")</td>"
            if owner {
                html += "<td><form class=\"inline\" method=\"post\" action=\"\(base)/role\">\(ConsoleHTML.csrfField(user))"
                    + "<input type=\"hidden\" name=\"email\" value=\"\(email)\">"
                    + "<select name=\"role\" aria-label=\"Role of \(email)\">\(Self.options(selected: member.role.rawValue))</select>"
                    + "<button class=\"secondary\" type=\"submit\">Change role</button></form>"
                    + "<form class=\"inline\" method=\"post\" action=\"\(base)/remove\">\(ConsoleHTML.csrfField(user))"
                    + "<input type=\"hidden\" name=\"email\" value=\"\(email)\">"
                    + "<button class=\"danger\" type=\"submit\">Remove…</button></form></td>"
            }
            html += "</tr>"
        }
        html += "</tbody></table>"
        if owner {
            html += "<h2>Invite a member</h2><form id=\"invite\" method=\"post\" action=\"\(base)\">\(ConsoleHTML.csrfField(user))"
                + "<label for=\"email\">Email</label>"
                + "<input id=\"email\" name=\"email\" type=\"email\" maxlength=\"254\" required value=\"\(ConsoleHTML.escape(invite.email))\">"
                + ConsoleHTML.fieldErrors(invite.errors)
                + "<label for=\"role\">Role</label><select id=\"role\" name=\"role\">\(Self.options(selected: invite.role))</select>"
                + "<p class=\"hint\">They get an email with a link that works once, for 7 days: it makes their console "
                + "account (or, holding one, they accept and sign in).</p>"
                + "<div class=\"actions\"><button id=\"send-invite\" type=\"submit\">Invite</button></div></form>"
        }
        return ConsoleHTML.page(title: "Members", user: user, app: (membership.appId, membership.appName, "members"), body: html)
    }

    private static func options(selected: String) -> String {
        roles.map { "<option value=\"\($0.rawValue)\"\($0.rawValue == selected ? " selected" : "")>\($0.rawValue)</option>" }
            .joined()
    }

    /// `POST …/members` (invite), `…/members/role`, `…/members/remove` (after a confirmation).
    func act(_ action: String, _ request: HTTPRequest, user: ConsoleSite.Session, membership: ConsoleStore.Membership,
             form: [String: String]) throws -> RouteResult {
        let given = (form["email"] ?? "").trimmingCharacters(in: .whitespaces)
        let roleText = form["role"] ?? ""
        let email = ConsoleMemberRules.normalizedEmail(given)
        let role = ConsoleStore.Role(rawValue: roleText)
        if action == "invite" {
            guard let email else {
                return try page(user, membership, status: 422, notice: ConsoleHTML.notice("error", "Not invited: check the field below."),
                                invite: (given, roleText, ["must be a valid email address"]))
            }
            guard let role else { throw ConsoleSite.Refusal.notFound }
            try site.limit(.consoleInvite, request, user: user)
            if ConsoleMemberRules.needsFreshSignIn(from: nil, to: role) { try site.requireFreshSignIn(request, user: user) }
            let command = AdminV1.InviteConsoleMember(appId: membership.appId, consoleUid: user.uid, email: email,
                                                      role: role.rawValue, ip: request.clientIP)
            return send(command, request, user: user, membership: membership,
                        done: "Invited \(email) as \(role.rawValue): an email is on its way.", failed: "Not invited")
        }
        guard let email else { throw ConsoleSite.Refusal.notFound }
        let current = try site.console.members(consoleAppId: user.consoleApp.id, appId: membership.appId)
            .first { $0.email == email }?.role
        if action == "role" {
            guard let role else { throw ConsoleSite.Refusal.notFound }
            if ConsoleMemberRules.needsFreshSignIn(from: current, to: role) { try site.requireFreshSignIn(request, user: user) }
            let command = AdminV1.ChangeConsoleMemberRole(appId: membership.appId, consoleUid: user.uid, email: email,
                                                          role: role.rawValue, ip: request.clientIP)
            return send(command, request, user: user, membership: membership,
                        done: "\(email) is now \(role.rawValue).", failed: "Role not changed")
        }
        guard form["confirm"] == "yes" else {
            return .now(ConsoleSite.html(ConsoleHTML.confirmation(
                user, app: (membership.appId, membership.appName, "members"), question: "Remove \(email)?",
                consequence: "They lose their role in \(membership.appName) at once: their next console request for this app "
                    + "is refused. They can be invited again.",
                button: "Yes, remove", danger: true, action: request.path,
                cancel: "/console/apps/\(ConsoleHTML.component(membership.appId))/members", hidden: [("email", email)])))
        }
        if ConsoleMemberRules.needsFreshSignIn(from: current, to: nil) { try site.requireFreshSignIn(request, user: user) }
        let command = AdminV1.RemoveConsoleMember(appId: membership.appId, consoleUid: user.uid, email: email, ip: request.clientIP)
        return send(command, request, user: user, membership: membership, done: "\(email) is no longer a member.",
                    failed: "Not removed")
    }

    /// The command with the console user's session token; the page again, with what happened.
    private func send<Command: ProtoMessage>(_ command: Command, _ request: HTTPRequest, user: ConsoleSite.Session,
                                             membership: ConsoleStore.Membership, done: String, failed: String) -> RouteResult {
        let site = self.site
        return site.send(command, expecting: AdminV1.ConsoleMemberChanged.self, appId: membership.appId, user: user,
                         request: request) { .object(["email": .string($0.email), "role": .string($0.role)]) }
            .flatMap { response in
                let ok = response.status == 200
                let notice = ok ? ConsoleHTML.notice("ok", done)
                    : ConsoleHTML.notice("error", failed + ": " + ConsoleSite.problem(response).message)
                do {
                    // The caller may have removed or demoted themselves: their role is read again.
                    guard let fresh = try site.session(request), let now = fresh.membership(membership.appId) else {
                        return .now(ConsoleSite.redirect("/console"))
                    }
                    return try ConsoleMembers(site: site).page(fresh, now, status: response.status, notice: notice)
                } catch {
                    return .now(ConsoleSite.redirect("/console/apps/\(ConsoleHTML.component(membership.appId))/members"))
                }
            }
    }

    private func page(_ user: ConsoleSite.Session, _ membership: ConsoleStore.Membership, status: Int, notice: String,
                      invite: (email: String, role: String, errors: [String]) = ("", "viewer", [])) throws -> RouteResult {
        .now(ConsoleSite.html(try show(user: user, membership: membership, notice: notice, invite: invite), status: status))
    }
}
