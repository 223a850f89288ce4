import Foundation
import IdentityKit

/// What an owner or admin does to one user on the Users page: disable or enable, end one session
/// or all, reset two-step verification, delete. Each is a form posting to
/// `/console/apps/{app}/users/{uid}/…`: without `confirm=yes` it answers the confirmation page
/// (a form of its own, with the token); with it, the fresh sign-in the action may need, then the
/// admin API's operation called as the console user (`ConsoleSite.call`: its access, limits,
/// audit row and command are the operation's). Ending sessions still sends the revocation
/// command itself, with its own audit row, to tell how many sessions ended (the operations
/// answer 204).
struct ConsoleUserActions {
    let site: ConsoleSite

    enum Action: Sendable, Equatable {
        case disable, enable, endSessions, resetMfa, delete
        case endSession(String)

        /// The path after `users/{uid}/`: `disable`, `enable`, `end-sessions`, `reset-mfa`,
        /// `delete`, or `sessions/{session_id}/end`.
        init?(_ segments: [String]) {
            switch segments {
            case ["disable"]: self = .disable
            case ["enable"]: self = .enable
            case ["end-sessions"]: self = .endSessions
            case ["reset-mfa"]: self = .resetMfa
            case ["delete"]: self = .delete
            case let parts where parts.count == 3 && parts[0] == "sessions" && parts[2] == "end":
                let id = parts[1]
                guard !id.isEmpty, id.utf8.count <= 64,
                      id.utf8.allSatisfy({ $0 == 95 || ($0 >= 48 && $0 <= 57) || ($0 >= 65 && $0 <= 90) || ($0 >= 97 && $0 <= 122) })
                else { return nil }
                self = .endSession(id)
            default: return nil
            }
        }

        var path: String {
            switch self {
            case .disable: "disable"
            case .enable: "enable"
            case .endSessions: "end-sessions"
            case .resetMfa: "reset-mfa"
            case .delete: "delete"
            case .endSession(let id): "sessions/\(ConsoleHTML.component(id))/end"
            }
        }

        /// The admin API operation the action is: its declared audit action names the audit row.
        var operation: DeclaredOperation {
            switch self {
            case .disable: .adminDisableUser
            case .enable: .adminEnableUser
            case .endSessions: .adminEndAllSessions
            case .endSession: .adminEndSession
            case .resetMfa: .adminResetUserMfa
            case .delete: .adminDeleteUser
            }
        }

        /// What cannot be undone or hands an account over needs a sign-in of the last minutes.
        var needsFreshSignIn: Bool { [.disable, .resetMfa, .delete].contains(self) }

        var destructive: Bool { self != .enable }

        /// The confirmation page's question, what follows, and its button.
        func confirmation(_ name: String) -> (question: String, consequence: String, button: String) {
            switch self {
            case .disable:
                ("Disable \(name)?", "They are signed out everywhere at once and cannot sign in until enabled again.", "Yes, disable")
            case .enable:
                ("Enable \(name)?", "They can sign in again.", "Yes, enable")
            case .endSessions:
                ("End every session of \(name)?", "They are signed out on every device at once: their tokens and "
                    + "refresh tokens are refused from now on. They can sign in again.", "Yes, end all sessions")
            case .endSession:
                ("End this session of \(name)?", "That device is signed out at once: its tokens and refresh token are "
                    + "refused from now on. Their other sessions go on.", "Yes, end this session")
            case .resetMfa:
                ("Reset two-step verification of \(name)?", "Every second factor and backup code of theirs is removed: they "
                    + "sign in with their password or provider alone until they set one up again. Do this only once you "
                    + "have made sure the person asking is the account's owner.", "Yes, reset")
            case .delete:
                ("Delete \(name)?", "The account is deleted for good: every session ends, its sign-in methods, passkeys and "
                    + "data go, and a Sign in with Apple authorization is revoked. This cannot be undone.", "Yes, delete")
            }
        }
    }

    func run(_ action: Action, _ request: HTTPRequest, user: ConsoleSite.Session, membership: ConsoleStore.Membership,
             uid: String, form: [String: String]) throws -> RouteResult {
        guard uid.utf8.count <= 64, let profile = try site.users.find(appId: membership.appId, uid: uid) else {
            throw ConsoleSite.Refusal.notFound
        }
        let name = profile.message.email ?? uid
        let tab = (membership.appId, membership.appName, "users")
        let userPage = "/console/apps/\(ConsoleHTML.component(membership.appId))/users/\(ConsoleHTML.component(uid))"
        guard form["confirm"] == "yes" else {
            let (question, consequence, button) = action.confirmation(name)
            return .now(ConsoleSite.html(ConsoleHTML.confirmation(
                user, app: tab, question: question, consequence: consequence, button: button,
                danger: action.destructive, action: "\(userPage)/\(action.path)", cancel: userPage)))
        }
        if action.needsFreshSignIn { try site.requireFreshSignIn(request, user: user) }
        switch action {
        case .endSessions, .endSession:
            var detail: [String: JSONValue] = ["via": "console"]
            if case .endSession(let id) = action { detail["session_id"] = .string(id) }
            try site.audit(action.operation, appId: membership.appId, user: user, target: "user:" + uid, request: request,
                           detail: detail)
        default: break
        }
        let site = self.site
        return send(action, request, user: user, appId: membership.appId, uid: uid).flatMap { response in
            let refused = response.status != 200
            if action == .delete, !refused {
                return .now(ConsoleSite.html(ConsoleHTML.page(title: "Deleted", user: user, app: tab, body: """
                    <h1>Deleted</h1>\(ConsoleHTML.notice("ok", "\(name) is deleted: every session has ended."))
                    <p><a id="all-users" href="/console/apps/\(ConsoleHTML.component(membership.appId))/users">← All users</a></p>
                    """)))
            }
            let notice = refused
                ? ConsoleHTML.notice("error", "Not done: " + ConsoleSite.problem(response).message)
                : ConsoleHTML.notice("ok", Self.done(action, ConsoleSite.data(response)))
            do {
                return try ConsoleUsers(site: site).showing(request, user: user, membership: membership, uid: uid,
                                                            notice: notice, status: response.status)
            } catch {
                return .now(ConsoleSite.redirect("/console/apps/\(ConsoleHTML.component(membership.appId))/users"))
            }
        }
    }

    /// The admin API's operation of each action, called as the console user.
    private func send(_ action: Action, _ request: HTTPRequest, user: ConsoleSite.Session, appId: String,
                      uid: String) -> RouteResult {
        let ended: @Sendable (RevocationV1.SessionsEnded) -> JSONValue = { .object(["count": JSONValue(Int($0.count))]) }
        switch action {
        case .disable:
            return site.call(user, appId: appId, request: request) { try await $0.adminDisableUser(uid: uid, as: $1) }
        case .enable:
            return site.call(user, appId: appId, request: request) { try await $0.adminEnableUser(uid: uid, as: $1) }
        case .resetMfa:
            return site.call(user, appId: appId, request: request) { try await $0.adminResetUserMfa(uid: uid, as: $1) }
        case .delete:
            return site.call(user, appId: appId, request: request) { try await $0.adminDeleteUser(uid: uid, as: $1) }
        case .endSessions:
            let command = RevocationV1.EndAllSessions(appId: appId, uid: uid, reason: "revoked_by_admin")
            return site.send(command, expecting: RevocationV1.SessionsEnded.self, queue: BusTopology.revocationCommands,
                             appId: appId, user: user, request: request, render: ended)
        case .endSession(let id):
            let command = RevocationV1.EndSession(appId: appId, uid: uid, sessionId: id, reason: "revoked_by_admin")
            return site.send(command, expecting: RevocationV1.SessionsEnded.self, queue: BusTopology.revocationCommands,
                             appId: appId, user: user, request: request, render: ended)
        }
    }

    private static func done(_ action: Action, _ data: JSONValue?) -> String {
        let count: Int = if case .number(let n)? = data?["count"] { Int(n) } else { 0 }
        switch action {
        case .disable: return "Disabled: every session of this user has ended."
        case .enable: return "Enabled."
        case .endSessions: return count == 1 ? "Ended 1 session." : "Ended \(count) sessions."
        case .endSession: return count > 0 ? "Session ended." : "That session had ended already."
        case .resetMfa: return "Two-step verification reset: no second factor or backup code is left."
        case .delete: return "Deleted."
        }
    }
}
