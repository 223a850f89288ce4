import Foundation
import IdentityKit
import OperationAPI

/// "New user" on the Users page (owners and admins): the admin API's `adminCreateUser`
/// operation called as the console user (`ConsoleSite.call`), so its rules, problems, rate
/// limit, audit row and command are the operation's own. A refused field is shown next to its
/// field with the API's own message; the password is never written back into the page.
struct ConsoleUserCreation {
    let site: ConsoleSite

    /// The form's fields: (name as the API's body names it, label, input type, hint).
    static let fields: [(name: String, label: String, type: String, hint: String)] = [
        ("email", "Email", "email", "Their address; they sign in with it."),
        ("password", "Password", "password", "Optional: at least 8 characters. Without one they sign in with a code, a provider or a reset."),
        ("first_name", "First name", "text", "Optional."),
        ("last_name", "Last name", "text", "Optional."),
        ("username", "Username", "text", "Optional: 3 to 32 letters, digits, _ or ."),
        ("phone", "Phone", "tel", "Optional, in E.164: +33612345678."),
    ]

    func create(_ request: HTTPRequest, user: ConsoleSite.Session, membership: ConsoleStore.Membership,
                form: [String: String]) throws -> RouteResult {
        func text(_ name: String) -> String? {
            let value = TextScanning.trimmed(Substring(form[name] ?? ""))
            return value.isEmpty ? nil : value
        }
        let input = AdminCreateUserInput(
            email: text("email"), password: form["password"].flatMap { $0.isEmpty ? nil : $0 },
            emailVerified: form["email_verified"] == "yes", phone: text("phone"), username: text("username"),
            firstName: text("first_name"), lastName: text("last_name"))
        let site = self.site
        let base = "/console/apps/\(ConsoleHTML.component(membership.appId))/users"
        return site.call(user, appId: membership.appId, request: request) { try await $0.adminCreateUser(input, as: $1) }
            .flatMap { response in
                if response.status == 200, case .string(let uid)? = ConsoleSite.data(response)?["uid"] {
                    return .now(ConsoleSite.redirect("\(base)/\(ConsoleHTML.component(uid))"))
                }
                let (message, fields) = ConsoleSite.problem(response)
                var values = form
                values["password"] = nil
                do {
                    let page = try ConsoleUsers(site: site).list(
                        request, user: user, membership: membership, notice: ConsoleHTML.notice("error", "Not created: " + message),
                        creating: (values, fields))
                    return .now(ConsoleSite.html(page, status: response.status))
                } catch {
                    return .now(ConsoleSite.redirect(base))
                }
            }
    }

    /// The form, with what was typed and each field's problems (`creating`).
    static func form(user: ConsoleSite.Session, membership: ConsoleStore.Membership,
                     creating: (values: [String: String], errors: [String: [String]])?) -> String {
        var html = "<section class=\"card\"><h2>New user</h2>"
            + "<form id=\"new-user\" method=\"post\" action=\"/console/apps/\(ConsoleHTML.component(membership.appId))/users\">"
            + ConsoleHTML.csrfField(user)
        for field in fields {
            html += ConsoleHTML.input(id: "new_" + field.name, name: field.name, label: field.label, type: field.type,
                                      value: creating?.values[field.name] ?? "", hint: field.hint,
                                      errors: creating?.errors[field.name] ?? [], autocompleteOff: true)
        }
        let verified = creating?.values["email_verified"] == "yes" ? " checked" : ""
        html += "<label><input id=\"new_email_verified\" name=\"email_verified\" type=\"checkbox\" value=\"yes\"\(verified)> "
            + "The email address is theirs (verified)</label>" + ConsoleHTML.fieldErrors(creating?.errors["email_verified"] ?? [])
        return html + "<div class=\"actions\"><button id=\"create-user\" type=\"submit\">Create user</button></div></form></section>"
    }
}
