import Foundation
import IdentityKit

/// An app's Webhooks page: its endpoints, read and changed with the admin API's own
/// `ManageWebhooks` command (the token worker seals and opens the secrets; the gateway never
/// holds one), after the admin API's own checks of the URL, events and description. Adding an
/// endpoint shows its signing secret once and needs a fresh sign-in (a secret is handed out);
/// deleting asks for confirmation and a fresh sign-in; disabling and enabling are immediate
/// (nothing is lost: deliveries wait while an endpoint is disabled). Every role sees the list.
struct ConsoleWebhooks {
    let site: ConsoleSite

    func show(_ request: HTTPRequest, user: ConsoleSite.Session, membership: ConsoleStore.Membership) -> RouteResult {
        list(request, user: user, membership: membership, status: 200, top: "", form: nil)
    }

    func create(_ request: HTTPRequest, user: ConsoleSite.Session, membership: ConsoleStore.Membership,
                form: [String: String]) throws -> RouteResult {
        let url = TextScanning.trimmed(Substring(form["url"] ?? ""))
        let events = (form["events"] ?? "").split { $0 == "," || $0.isWhitespace }.map(String.init)
        let chosen = events.isEmpty ? ["*"] : events
        let description = TextScanning.trimmed(Substring(form["description"] ?? ""))
        // The admin API's own rules, before any command, each next to its field.
        var errors: [String: [String]] = [:]
        if url.isEmpty { errors["url", default: []].append("is required") }
        if !url.isEmpty, let problem = OutboundAddressPolicy.current.problem(url: url) { errors["url", default: []].append(problem) }
        if let problem = WebhookRules.eventsProblem(chosen) { errors["events", default: []].append(problem) }
        if let problem = WebhookRules.descriptionProblem(description) { errors["description", default: []].append(problem) }
        if !errors.isEmpty {
            return list(request, user: user, membership: membership, status: 422,
                        top: ConsoleHTML.notice("error", "Not added: fix the fields marked below."), form: (form, errors))
        }
        try site.requireFreshSignIn(request, user: user)
        try site.audit(.adminCreateWebhook, appId: membership.appId, user: user, target: "app", request: request,
                       detail: ["url": .string(url), "via": "console"])
        var command = AdminV1.ManageWebhooks(appId: membership.appId, actor: "console:" + user.uid, action: "create")
        command.url = url
        command.events = chosen
        command.eventsGiven = true
        command.description = description.isEmpty ? nil : description
        return send(command, request, user: user, membership: membership).flatMap { response in
            guard response.status == 200, let made = ConsoleSite.data(response),
                  case .string(let secret)? = made["secret"] else {
                let (message, fields) = ConsoleSite.problem(response)
                return self.list(request, user: user, membership: membership, status: response.status,
                                 top: ConsoleHTML.notice("error", "Not added: " + message), form: (form, fields))
            }
            let shown = """
                <section class="card secret"><h2>Signing secret of \(ConsoleHTML.escape(url))</h2>
                \(ConsoleHTML.notice("ok", "Endpoint added. Copy its signing secret now: it is shown this once and never again."))
                <p><code id="webhook-secret">\(ConsoleHTML.escape(secret))</code></p>
                <p class="hint">Your endpoint checks each delivery's webhook-signature header with it (Standard Webhooks).</p>
                </section>
                """
            return self.list(request, user: user, membership: membership, status: 200, top: shown, form: nil)
        }
    }

    /// `disable`, `enable` (the admin API's update of `enabled`) or `delete` (confirmed first).
    func act(_ action: String, webhookId: String, _ request: HTTPRequest, user: ConsoleSite.Session,
             membership: ConsoleStore.Membership, form: [String: String]) throws -> RouteResult {
        guard webhookId.utf8.count <= 64 else { throw ConsoleSite.Refusal.notFound }
        let base = "/console/apps/\(ConsoleHTML.component(membership.appId))/webhooks"
        if action == "delete", form["confirm"] != "yes" {
            return .now(ConsoleSite.html(ConsoleHTML.confirmation(
                user, app: (membership.appId, membership.appName, "webhooks"), question: "Delete this endpoint?",
                consequence: "It gets no more events, and its secret and delivery history go. This cannot be undone.",
                button: "Yes, delete", danger: true, action: "\(base)/\(ConsoleHTML.component(webhookId))/delete",
                cancel: base)))
        }
        if action == "delete" { try site.requireFreshSignIn(request, user: user) }
        try site.audit(action == "delete" ? .adminDeleteWebhook : .adminUpdateWebhook, appId: membership.appId,
                       user: user, target: "app", request: request,
                       detail: ["webhook_id": .string(webhookId), "via": "console"])
        var command = AdminV1.ManageWebhooks(appId: membership.appId, actor: "console:" + user.uid,
                                             action: action == "delete" ? "delete" : "update")
        command.webhookId = webhookId
        if action != "delete" { command.enabled = action == "enable" }
        return send(command, request, user: user, membership: membership).flatMap { response in
            let top = response.status == 200
                ? ConsoleHTML.notice("ok", action == "delete" ? "Endpoint deleted." : action == "enable" ? "Endpoint enabled." : "Endpoint disabled: its events wait, undelivered, until it is enabled again.")
                : ConsoleHTML.notice("error", "Not done: " + ConsoleSite.problem(response).message)
            return self.list(request, user: user, membership: membership, status: response.status, top: top, form: nil)
        }
    }

    private func send(_ command: AdminV1.ManageWebhooks, _ request: HTTPRequest, user: ConsoleSite.Session,
                      membership: ConsoleStore.Membership) -> RouteResult {
        site.send(command, expecting: AdminV1.WebhookAnswer.self, appId: membership.appId, user: user, request: request) {
            JSONValue.parse(Data($0.dataJson.utf8)) ?? .null
        }
    }

    /// The page: `top` (a notice, or the new secret), the endpoints (the worker's `list`) and,
    /// for owners and admins, each one's buttons and the form adding one.
    private func list(_ request: HTTPRequest, user: ConsoleSite.Session, membership: ConsoleStore.Membership, status: Int,
                      top: String, form: (values: [String: String], errors: [String: [String]])?) -> RouteResult {
        let command = AdminV1.ManageWebhooks(appId: membership.appId, actor: "console:" + user.uid, action: "list")
        return send(command, request, user: user, membership: membership).flatMap { response in
            var html = "<h1>Webhooks</h1>" + top
            if response.status == 200, case .array(let endpoints)? = ConsoleSite.data(response) {
                html += Self.table(endpoints, user: user, membership: membership)
            } else {
                html += ConsoleHTML.notice("error", "The endpoints could not be read: " + ConsoleSite.problem(response).message)
            }
            if membership.role.mayChange { html += Self.addForm(user: user, membership: membership, form: form) }
            return .now(ConsoleSite.html(ConsoleHTML.page(title: "Webhooks", user: user,
                                                          app: (membership.appId, membership.appName, "webhooks"), body: html),
                                         status: status))
        }
    }

    private static func table(_ endpoints: [JSONValue], user: ConsoleSite.Session, membership: ConsoleStore.Membership) -> String {
        guard !endpoints.isEmpty else {
            return ConsoleHTML.notice("info", "No endpoint yet: events of this app are sent nowhere.")
        }
        func text(_ value: JSONValue?) -> String { if case .string(let s)? = value { s } else { "" } }
        let base = "/console/apps/\(ConsoleHTML.component(membership.appId))/webhooks"
        var html = "<table id=\"webhooks\"><thead><tr><th>URL</th><th>Events</th><th>Description</th><th>State</th>"
            + "<th>Created</th><th></th></tr></thead><tbody>"
        for endpoint in endpoints {
            let id = text(endpoint["id"])
            let enabled = endpoint["enabled"] == .bool(true)
            let events: [String] = if case .array(let items)? = endpoint["events"] { items.map { text($0) } } else { [] }
            html += "<tr data-webhook=\"\(ConsoleHTML.escape(id))\"><td><a id=\"open-\(ConsoleHTML.escape(id))\" "
                + "href=\"\(base)/\(ConsoleHTML.component(id))\"><code>\(ConsoleHTML.escape(text(endpoint["url"])))</code></a></td>"
                + "<td>\(ConsoleHTML.escape(events == ["*"] ? "every event" : events.joined(separator: ", ")))</td>"
                + "<td>\(ConsoleHTML.escape(text(endpoint["description"])))</td>"
                + "<td>\(enabled ? "<span class=\"badge on\">enabled</span>" : "<span class=\"badge off\">disabled</span>")</td>"
                + "<td>\(ConsoleHTML.escape(text(endpoint["created_at"])))</td><td>"
            if membership.role.mayChange {
                let toggle = enabled ? "disable" : "enable"
                for (action, label, danger) in [(toggle, enabled ? "Disable" : "Enable", false), ("delete", "Delete…", true)] {
                    html += "<form class=\"inline\" method=\"post\" action=\"\(base)/\(ConsoleHTML.component(id))/\(action)\">"
                        + ConsoleHTML.csrfField(user) + "<button id=\"\(action)-\(ConsoleHTML.escape(id))\" type=\"submit\""
                        + "\(danger ? " class=\"danger\"" : " class=\"secondary\"")>\(label)</button></form> "
                }
            }
            html += "</td></tr>"
        }
        return html + "</tbody></table>"
    }

    private static func addForm(user: ConsoleSite.Session, membership: ConsoleStore.Membership,
                                form: (values: [String: String], errors: [String: [String]])?) -> String {
        let fields: [(name: String, label: String, hint: String)] = [
            ("url", "Endpoint URL", "https:// address of your server that receives the events (a public address)."),
            ("events", "Events", "Event names separated by commas or spaces, such as user.created, user.deleted; empty for every event."),
            ("description", "Description", "Optional: what this endpoint is for (at most 200 characters)."),
        ]
        var html = "<section class=\"card\"><h2>Add an endpoint</h2>"
            + "<form id=\"add-webhook\" method=\"post\" action=\"/console/apps/\(ConsoleHTML.component(membership.appId))/webhooks\">"
            + ConsoleHTML.csrfField(user)
        for field in fields {
            html += ConsoleHTML.input(id: "webhook_" + field.name, name: field.name, label: field.label,
                                      value: form?.values[field.name] ?? "", hint: field.hint, errors: form?.errors[field.name] ?? [])
        }
        return html + "<div class=\"actions\"><button id=\"add\" type=\"submit\">Add endpoint</button></div></form></section>"
    }
}
