import Foundation
import IdentityKit
import OperationAPI

/// "Edit" on a user's page (owners and admins): the admin API's `adminUpdateUser` operation
/// called as the console user (`ConsoleSite.call`). The form holds the user's values; a text
/// field left empty clears it (the operation's `null_clears`), roles are a comma list (replaced
/// as a whole), custom claims and metadata JSON objects (replaced; empty is `{}`). A change of
/// email or phone moves a way in and takes a sign-in of the last minutes. The API's problems are
/// shown next to their fields, with what was typed.
struct ConsoleUserEditing {
    let site: ConsoleSite

    /// The text fields (API name, label, input type) and the JSON ones (API name, label).
    static let texts: [(name: String, label: String, type: String)] = [
        ("email", "Email", "email"), ("first_name", "First name", "text"), ("last_name", "Last name", "text"),
        ("username", "Username", "text"), ("phone", "Phone (E.164)", "tel"),
    ]
    static let documents: [(name: String, label: String)] = [
        ("custom_claims", "Custom claims (JSON object, in every access token)"),
        ("app_metadata", "App metadata (JSON object, the user cannot change it)"),
        ("user_metadata", "User metadata (JSON object, the user may change it)"),
    ]

    func update(_ request: HTTPRequest, user: ConsoleSite.Session, membership: ConsoleStore.Membership, uid: String,
                form: [String: String]) throws -> RouteResult {
        guard let current = try site.users.find(appId: membership.appId, uid: uid)?.message else {
            throw ConsoleSite.Refusal.notFound
        }
        func text(_ name: String) -> String? {
            let value = TextScanning.trimmed(Substring(form[name] ?? ""))
            return value.isEmpty ? nil : value
        }
        var errors: [String: [String]] = [:]
        func document(_ name: String) -> JSONValue {
            let value = TextScanning.trimmed(Substring(form[name] ?? ""))
            guard !value.isEmpty else { return .object([:]) }
            guard case .object? = JSONValue.parse(Data(value.utf8)) else {
                errors[name, default: []].append("must be a JSON object, such as {\"plan\": \"pro\"}")
                return .object([:])
            }
            return JSONValue.parse(Data(value.utf8)) ?? .object([:])
        }
        var clearing: Set<AdminUpdateUserInput.Clearable> = []
        for field in AdminUpdateUserInput.Clearable.allCases where text(field.rawValue) == nil { clearing.insert(field) }
        let roles = (form["roles"] ?? "").split { $0 == "," || $0.isWhitespace }.map { JSONValue.string(String($0)) }
        let input = AdminUpdateUserInput(
            email: text("email"), emailVerified: form["email_verified"] == "yes", phone: text("phone"),
            username: text("username"), firstName: text("first_name"), lastName: text("last_name"), roles: .array(roles),
            customClaims: document("custom_claims"), appMetadata: document("app_metadata"),
            userMetadata: document("user_metadata"), clearing: clearing)
        guard errors.isEmpty else {
            return .now(ConsoleSite.html(try page(user: user, membership: membership, uid: uid,
                                                  notice: ConsoleHTML.notice("error", "Not saved: fix the fields marked below."),
                                                  editing: (form, errors)), status: 422))
        }
        if input.email != current.email || input.phone != current.phone { try site.requireFreshSignIn(request, user: user) }
        let site = self.site
        return site.call(user, appId: membership.appId, request: request) { try await $0.adminUpdateUser(uid: uid, input, as: $1) }
            .flatMap { response in
                do {
                    if response.status == 200 {
                        return .now(ConsoleSite.html(try self.page(user: user, membership: membership, uid: uid,
                                                                   notice: ConsoleHTML.notice("ok", "Saved."), editing: nil)))
                    }
                    let (message, fields) = ConsoleSite.problem(response)
                    return .now(ConsoleSite.html(try self.page(user: user, membership: membership, uid: uid,
                                                               notice: ConsoleHTML.notice("error", "Not saved: " + message),
                                                               editing: (form, fields)), status: response.status))
                } catch {
                    return .now(ConsoleSite.redirect("/console/apps/\(ConsoleHTML.component(membership.appId))/users"))
                }
            }
    }

    /// The edit page: the form with the user's values, or what was typed and its problems.
    func page(user: ConsoleSite.Session, membership: ConsoleStore.Membership, uid: String, notice: String?,
              editing: (values: [String: String], errors: [String: [String]])?) throws -> String {
        guard let current = try site.users.find(appId: membership.appId, uid: uid)?.message else {
            throw ConsoleSite.Refusal.notFound
        }
        func pretty(_ text: String) -> String {
            guard let value = JSONValue.parse(Data(text.utf8)), value != .object([:]) else { return "" }
            return value.serialized
        }
        let values = editing?.values ?? [
            "email": current.email ?? "", "first_name": current.firstName ?? "", "last_name": current.lastName ?? "",
            "username": current.username ?? "", "phone": current.phone ?? "", "roles": current.roles.joined(separator: ", "),
            "email_verified": current.emailVerified ? "yes" : "", "custom_claims": pretty(current.customClaimsJson),
            "app_metadata": pretty(current.appMetadataJson), "user_metadata": pretty(current.userMetadataJson),
        ]
        let errors = editing?.errors ?? [:]
        let userPage = "/console/apps/\(ConsoleHTML.component(membership.appId))/users/\(ConsoleHTML.component(uid))"
        var html = "<h1>Edit \(ConsoleHTML.escape(current.email ?? uid))</h1>" + (notice ?? "")
            + "<section class=\"card\"><form id=\"edit-user\" method=\"post\" action=\"\(userPage)/edit\">" + ConsoleHTML.csrfField(user)
        func invalid(_ name: String) -> String { (errors[name] ?? []).isEmpty ? "" : " class=\"invalid\" aria-invalid=\"true\"" }
        for field in Self.texts {
            html += ConsoleHTML.input(id: "edit_" + field.name, name: field.name, label: field.label, type: field.type,
                                      value: values[field.name] ?? "", errors: errors[field.name] ?? [], autocompleteOff: true)
        }
        html += "<p class=\"hint\">A field left empty is cleared.</p>"
        html += "<label><input id=\"edit_email_verified\" name=\"email_verified\" type=\"checkbox\" value=\"yes\""
            + "\(values["email_verified"] == "yes" ? " checked" : "")> The email address is verified</label>"
            + ConsoleHTML.fieldErrors(errors["email_verified"] ?? [])
        html += ConsoleHTML.input(id: "edit_roles", name: "roles", label: "Roles", value: values["roles"] ?? "",
                                  hint: "Separated by commas; they replace the user's roles.", errors: errors["roles"] ?? [],
                                  autocompleteOff: true)
        for field in Self.documents {
            html += "<label for=\"edit_\(field.name)\">\(field.label)</label>"
                + "<textarea id=\"edit_\(field.name)\" name=\"\(field.name)\" rows=\"3\"\(invalid(field.name))>"
                + ConsoleHTML.escape(values[field.name] ?? "") + "</textarea>" + ConsoleHTML.fieldErrors(errors[field.name] ?? [])
        }
        html += "<div class=\"actions\"><button id=\"save-user\" type=\"submit\">Save</button></div></form></section>"
            + "<p><a id=\"back-to-user\" href=\"\(userPage)\">← Back to the user</a></p>"
        return ConsoleHTML.page(title: "Edit " + (current.email ?? uid), user: user,
                                app: (membership.appId, membership.appName, "users"), body: html)
    }
}
