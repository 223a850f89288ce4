import Foundation
import IdentityKit

/// An app's Settings page: every setting its team manages, in sections (ConsoleSettingsSections.swift),
/// each its own form. Read and written with the admin API's own command (`UpdateAppSettings`,
/// an empty update reading them) and checked first by the same `AppSettingsUpdate` rules, so a
/// refused value shows the API's message next to its field and nothing is saved. A section
/// sends only the settings its form changed. Secrets (keys, tokens) are write-only: sealed by
/// the worker, shown only as set or not, and setting one needs a fresh sign-in.
struct ConsoleSettings {
    let site: ConsoleSite

    /// What a section's form got back: the values typed (shown again when refused), messages by
    /// form name ("" for the section's own) and the notice.
    struct Outcome: Sendable {
        let section: String
        var typed: [String: String]?
        var errors: [String: [String]]
        let notice: String
    }

    func show(_ request: HTTPRequest, user: ConsoleSite.Session, membership: ConsoleStore.Membership) -> RouteResult {
        read(request, user: user, membership: membership) { settings in
            let editor = ConsoleMailTemplates.Editor(opening: request.query["template"], settings: settings)
            return ConsoleSite.html(Self.page(user: user, membership: membership, settings: settings, outcome: nil, editor: editor))
        }
    }

    func save(_ sectionId: String, _ request: HTTPRequest, user: ConsoleSite.Session, membership: ConsoleStore.Membership,
              form: [String: String]) throws -> RouteResult {
        if sectionId == ConsoleMailTemplates.sectionId {
            return try ConsoleMailTemplates(site: site).post(request, user: user, membership: membership, form: form)
        }
        guard let section = ConsoleSettingsSections.named(sectionId) else { throw ConsoleSite.Refusal.notFound }
        let body = section.body(form)
        let editor = ConsoleMailTemplates.Editor()
        guard !body.isEmpty else {
            return read(request, user: user, membership: membership) { settings in
                ConsoleSite.html(Self.page(user: user, membership: membership, settings: settings, outcome: Outcome(
                    section: section.id, errors: [:], notice: ConsoleHTML.notice("info", "Nothing was changed.")), editor: editor))
            }
        }
        let problems = Self.problems(body)
        if !problems.isEmpty {
            return refused(section.id, typed: form, errors: section.place(problems), status: 422, request, user: user,
                           membership: membership, editor: editor)
        }
        let secretGiven = section.fields.contains { $0.isSecret && body[$0.name] != nil }
        return try update(body, section: section.id, freshSignIn: secretGiven, request, user: user, membership: membership,
                          editor: editor, place: { section.place($0) }, typed: form)
    }

    /// The admin API's own checks of a body (`PATCH /v1/admin/settings`'s 422), by setting.
    static func problems(_ body: [String: JSONValue]) -> [(setting: String, message: String)] {
        let (update, shape) = AppSettingsUpdate.parse(.object(body))
        let shapes = shape.map { problem in
            (setting: problem.location.split(separator: ".").dropFirst().first.map(String.init) ?? problem.location,
             message: problem.message)
        }
        return shapes + update.problems(offAllowed: true)
    }

    /// Sends a checked update; what the worker still refuses (an operator's ceiling, a host that
    /// is another app's) shows like the checks' messages, and nothing is saved.
    func update(_ body: [String: JSONValue], section: String, freshSignIn: Bool, _ request: HTTPRequest,
                user: ConsoleSite.Session, membership: ConsoleStore.Membership, editor: ConsoleMailTemplates.Editor,
                place: @escaping @Sendable ([(setting: String, message: String)]) -> [String: [String]],
                typed: [String: String]) throws -> RouteResult {
        // A secret typed in, or anything that can hand over the app's accounts or mail, takes a
        // recent sign-in (the token worker asks it again: `CallerAuthority`).
        if freshSignIn || AppSettingsUpdate.parse(.object(body)).0.handsOverAccounts {
            try site.requireFreshSignIn(request, user: user)
        }
        try site.audit(.adminUpdateSettings, appId: membership.appId, user: user, target: "app", request: request,
                       detail: ["settings": .array(body.keys.sorted().map(JSONValue.string)), "via": "console"])
        let command = AdminV1.UpdateAppSettings(appId: membership.appId, settingsJson: JSONValue.object(body).serialized,
                                                actor: "console:" + user.uid)
        return site.send(command, expecting: AdminV1.AppSettings.self, appId: membership.appId, user: user, request: request) {
            JSONValue.parse(Data($0.settingsJson.utf8)) ?? .null
        }.flatMap { response in
            guard response.status == 200, let settings = ConsoleSite.data(response) else {
                let (message, fields) = ConsoleSite.problem(response)
                let problems = fields.flatMap { setting, messages in messages.map { (setting: setting, message: $0) } }
                return self.refused(section, typed: typed, errors: place(problems), status: response.status, request,
                                    user: user, membership: membership, editor: editor, detail: "Not saved: " + message)
            }
            return .now(ConsoleSite.html(Self.page(user: user, membership: membership, settings: settings, outcome: Outcome(
                section: section, errors: [:], notice: ConsoleHTML.notice("ok", "Saved. The new settings apply from now on.")),
                editor: editor)))
        }
    }

    private func refused(_ section: String, typed: [String: String], errors: [String: [String]], status: Int,
                         _ request: HTTPRequest, user: ConsoleSite.Session, membership: ConsoleStore.Membership,
                         editor: ConsoleMailTemplates.Editor,
                         detail: String = "Nothing was saved: fix the fields marked below.") -> RouteResult {
        read(request, user: user, membership: membership) { settings in
            ConsoleSite.html(Self.page(user: user, membership: membership, settings: settings, outcome: Outcome(
                section: section, typed: typed, errors: errors, notice: ConsoleHTML.notice("error", detail)), editor: editor),
                status: status)
        }
    }

    /// The settings as the worker answers them (the same read as `GET /v1/admin/settings`).
    func read(_ request: HTTPRequest, user: ConsoleSite.Session, membership: ConsoleStore.Membership,
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

    /// The page: a list of the sections, then each with its fields (current values, or what
    /// was typed when refused), hints and errors; read-only without forms for a viewer.
    static func page(user: ConsoleSite.Session, membership: ConsoleStore.Membership, settings: JSONValue,
                     outcome: Outcome?, editor: ConsoleMailTemplates.Editor) -> String {
        let editable = membership.role.mayChange
        var html = "<h1>Settings</h1>"
        if !editable {
            html += ConsoleHTML.notice("info", "You are a viewer of this app: you can see its settings but not change them.")
        }
        html += "<nav class=\"toc\" aria-label=\"Sections\">" + ConsoleSettingsSections.all.map { section in
            "<a href=\"#\(section.id)\">\(ConsoleHTML.escape(section.title))</a>"
        }.joined() + "</nav>"
        let base = "/console/apps/\(ConsoleHTML.component(membership.appId))/settings"
        for section in ConsoleSettingsSections.all {
            let mine = outcome?.section == section.id ? outcome : nil
            html += "<section class=\"card\" id=\"\(section.id)\"><h2>\(ConsoleHTML.escape(section.title))</h2>"
                + "<p class=\"hint\">\(ConsoleHTML.escape(section.intro))</p>"
                + (mine?.notice ?? "") + ConsoleHTML.fieldErrors(mine?.errors[""] ?? [])
            html += editable
                ? "<form method=\"post\" action=\"\(base)/\(section.id)#\(section.id)\" id=\"settings-\(section.id)\">"
                    + ConsoleHTML.csrfField(user)
                : "<div id=\"settings-\(section.id)\">"
            for field in section.fields {
                html += field.html(settings: settings, typed: mine?.typed, errors: mine?.errors[field.formName] ?? [],
                                   editable: editable)
            }
            let facts = section.facts(settings)
            if !facts.isEmpty {
                html += "<ul class=\"facts\">" + facts.map { "<li>\(ConsoleHTML.escape($0))</li>" }.joined() + "</ul>"
            }
            html += editable
                ? "<div class=\"actions\"><button id=\"save-\(section.id)\" type=\"submit\">Save \(ConsoleHTML.escape(section.title.lowercased()))</button></div></form>"
                : "</div>"
            html += "</section>"
            if section.id == "mail" {
                let templates = outcome?.section == ConsoleMailTemplates.sectionId ? outcome : nil
                html += ConsoleMailTemplates.html(user: user, membership: membership, settings: settings, editor: editor,
                                                  outcome: templates, editable: editable)
            }
        }
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
