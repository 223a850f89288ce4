import Foundation
import IdentityKit

/// An app's Settings page: its sign-in providers, read and written with the admin API's own
/// command (`UpdateAppSettings`, an empty update reading them) and checked first by the same
/// `AppSettingsUpdate` rules, so a refused value shows the API's message next to its field. The
/// Apple key is write-only: sealed by the worker, shown only as set or not.
struct ConsoleSettings {
    let site: ConsoleSite

    /// The form's fields: (settings name, label, hint, kind).
    enum Kind { case lines, text, key }
    static let fields: [(name: String, label: String, hint: String, kind: Kind)] = [
        ("google_client_ids", "Google client IDs",
         "Paste each OAuth client ID on its own line: web, iOS and Android (Google Cloud console → Credentials). "
            + "A Google id token is accepted when its audience is one of these.", .lines),
        ("apple_bundle_ids", "Apple bundle IDs", "Your iOS apps' bundle IDs, one a line (Sign in with Apple on iOS).", .lines),
        ("apple_services_ids", "Apple Services IDs", "Services IDs for Sign in with Apple on the web, one a line.", .lines),
        ("apple_team_id", "Apple team ID", "The 10-character team ID of your Apple developer account.", .text),
        ("apple_key_id", "Apple key ID", "The ID of the Sign in with Apple key (.p8) below.", .text),
        ("apple_private_key", "Apple private key (.p8)",
         "Upload or paste the .p8 file. It is stored sealed and never shown again; leave empty to keep the one set.", .key),
        ("firebase_project_id", "Firebase project ID", "For apps whose clients sign in with Firebase.", .text),
    ]

    func show(_ request: HTTPRequest, user: ConsoleSite.Session, membership: ConsoleStore.Membership) -> RouteResult {
        read(request, user: user, membership: membership) { settings in
            ConsoleSite.html(Self.page(user: user, membership: membership, settings: settings, form: nil, notice: nil))
        }
    }

    func save(_ request: HTTPRequest, user: ConsoleSite.Session, membership: ConsoleStore.Membership,
              form: [String: String]) throws -> RouteResult {
        var body: [String: JSONValue] = [:]
        for field in Self.fields {
            let value = form[field.name] ?? ""
            switch field.kind {
            case .lines:
                body[field.name] = .array(value.split(whereSeparator: \.isNewline)
                    .map { TextScanning.trimmed($0) }.filter { !$0.isEmpty }.map(JSONValue.string))
            case .text:
                body[field.name] = .string(TextScanning.trimmed(Substring(value)))
            case .key:
                if !TextScanning.trimmed(Substring(value)).isEmpty { body[field.name] = .string(value) }
            }
        }
        let settingsBody = JSONValue.object(body)
        // The admin API's own checks, before any command: the same messages, next to their fields.
        let (update, shape) = AppSettingsUpdate.parse(settingsBody)
        let rules = update.problems(offAllowed: true).map { ServiceError.FieldProblem(location: "body.\($0.setting)", message: $0.message) }
        if !(shape + rules).isEmpty {
            var fieldErrors: [String: [String]] = [:]
            for problem in shape + rules {
                let name = problem.location.split(separator: ".").dropFirst().first.map(String.init) ?? problem.location
                fieldErrors[name, default: []].append(problem.message)
            }
            let errors = fieldErrors
            return read(request, user: user, membership: membership) { settings in
                ConsoleSite.html(Self.page(user: user, membership: membership, settings: settings, form: (form, errors),
                                           notice: ConsoleHTML.notice("error", "Nothing was saved: fix the fields marked below.")),
                                 status: 422)
            }
        }
        let keyGiven = body["apple_private_key"] != nil
        if keyGiven { try site.requireFreshSignIn(request, user: user) }
        try site.audit("admin.settings.update", appId: membership.appId, user: user, target: "app", request: request,
                       detail: ["settings": .array(body.keys.sorted().map(JSONValue.string)), "via": "console"])
        let command = AdminV1.UpdateAppSettings(appId: membership.appId, settingsJson: settingsBody.serialized,
                                                actor: "console:" + user.uid)
        return site.send(command, expecting: AdminV1.AppSettings.self, appId: membership.appId, user: user, request: request) {
            JSONValue.parse(Data($0.settingsJson.utf8)) ?? .null
        }.flatMap { response in
            guard response.status == 200, let settings = ConsoleSite.data(response) else {
                let (message, fields) = ConsoleSite.problem(response)
                return self.read(request, user: user, membership: membership) { settings in
                    ConsoleSite.html(Self.page(user: user, membership: membership, settings: settings, form: (form, fields),
                                               notice: ConsoleHTML.notice("error", "Not saved: " + message)),
                                     status: response.status)
                }
            }
            return .now(ConsoleSite.html(Self.page(user: user, membership: membership, settings: settings, form: nil,
                                                   notice: ConsoleHTML.notice("ok", "Saved. The new settings apply to the next sign-in."))))
        }
    }

    /// The settings as the worker answers them (the same read as `GET /v1/admin/settings`).
    private func read(_ request: HTTPRequest, user: ConsoleSite.Session, membership: ConsoleStore.Membership,
                      then render: @escaping @Sendable (JSONValue) -> HTTPResponse) -> RouteResult {
        let command = AdminV1.UpdateAppSettings(appId: membership.appId, settingsJson: "{}", actor: "console:" + user.uid)
        return site.send(command, expecting: AdminV1.AppSettings.self, appId: membership.appId, user: user, request: request) {
            JSONValue.parse(Data($0.settingsJson.utf8)) ?? .null
        }.flatMap { response in
            guard response.status == 200, let settings = ConsoleSite.data(response) else {
                let (message, _) = ConsoleSite.problem(response)
                return .now(ConsoleSite.html(ConsoleHTML.page(
                    title: "Settings", user: user, app: (membership.appId, membership.appName, "settings"),
                    body: "<h1>Settings</h1>" + ConsoleHTML.notice("error", "The settings could not be read: " + message)),
                    status: response.status))
            }
            return .now(render(settings))
        }
    }

    /// The page: each field with its current value (or what was typed, when refused), its hint
    /// and its errors; read-only without a save button for a viewer.
    static func page(user: ConsoleSite.Session, membership: ConsoleStore.Membership, settings: JSONValue,
                     form: (values: [String: String], errors: [String: [String]])?, notice: String?) -> String {
        let editable = membership.role.mayChange
        let locked = editable ? "" : " readonly"
        var html = "<h1>Settings</h1>" + (notice ?? "")
        if !editable {
            html += ConsoleHTML.notice("info", "You are a viewer of this app: you can see its settings but not change them.")
        }
        html += editable ? "<form method=\"post\" action=\"/console/apps/\(ConsoleHTML.component(membership.appId))/settings\" id=\"settings\">"
            + ConsoleHTML.csrfField(user) : "<div id=\"settings\">"
        html += "<section class=\"card\"><h2>Sign-in providers</h2>"
        for field in fields {
            let errors = form?.errors[field.name] ?? []
            let invalid = errors.isEmpty ? "" : " class=\"invalid\" aria-invalid=\"true\""
            let current: String
            switch settings[field.name] {
            case .array(let items)?: current = items.compactMap { if case .string(let s) = $0 { return s } else { return nil } }.joined(separator: "\n")
            case .string(let text)?: current = text
            default: current = ""
            }
            let value = ConsoleHTML.escape(form?.values[field.name] ?? current)
            html += "<label for=\"\(field.name)\">\(field.label)</label>"
            switch field.kind {
            case .lines:
                html += "<textarea id=\"\(field.name)\" name=\"\(field.name)\" rows=\"3\"\(invalid)\(locked)>\(value)</textarea>"
            case .text:
                html += "<input id=\"\(field.name)\" name=\"\(field.name)\" type=\"text\" value=\"\(value)\"\(invalid)\(locked)>"
            case .key:
                let set = settings["apple_private_key_set"] == .bool(true)
                html += "<p><span class=\"badge \(set ? "set" : "off")\" id=\"apple_private_key_state\">\(set ? "set" : "not set")</span></p>"
                if editable {
                    html += "<input id=\"apple_private_key_file\" type=\"file\" accept=\".p8,.pem,text/plain\" data-into=\"\(field.name)\">"
                        + "<textarea id=\"\(field.name)\" name=\"\(field.name)\" rows=\"4\" placeholder=\"-----BEGIN PRIVATE KEY-----\"\(invalid)></textarea>"
                }
            }
            html += "<p class=\"hint\">\(ConsoleHTML.escape(field.hint))</p>" + ConsoleHTML.fieldErrors(errors)
        }
        html += "</section>"
        html += editable ? "<div class=\"actions\"><button id=\"save\" type=\"submit\">Save settings</button></div></form>" : "</div>"
        return ConsoleHTML.page(title: "Settings", user: user, app: (membership.appId, membership.appName, "settings"), body: html)
    }
}

extension ConsoleSite {
    /// The `data` of a 200 answer.
    static func data(_ response: HTTPResponse) -> JSONValue? {
        guard case .value(let body) = JSONValue.parseBody(response.body) else { return nil }
        return body["data"]
    }
}
