import Foundation
import IdentityKit

/// One webhook endpoint's page, from the Webhooks list: what it is and its delivery log (the
/// admin API's `GET /v1/admin/webhooks/{id}/deliveries`: the last deliveries, newest first, each
/// with its last attempts), which every role sees. Owners and admins also get **Replay
/// dead-lettered deliveries…** and **Rotate signing secret…**, each the admin API's own
/// `ManageWebhooks` command after a confirmation, audited first under that operation's declared
/// action. A rotation hands out a secret, so it needs a fresh sign-in; the new secret is on its
/// answer page only (never in the audit row), and its overlap is checked against the declared
/// bounds before anything is audited.
struct ConsoleWebhookEndpoint {
    let site: ConsoleSite

    /// `WebhookRotateSecretRequest.overlap_seconds`'s declared default and bounds (the admin
    /// API's body reader and the worker check the same).
    static let defaultOverlap = String(GatewayV1.WebhookRotateSecretRequest.overlapSecondsDefault)
    static let overlapRange = GatewayV1.WebhookRotateSecretRequest.overlapSecondsRange

    func show(_ request: HTTPRequest, user: ConsoleSite.Session, membership: ConsoleStore.Membership,
              webhookId: String) throws -> RouteResult {
        try page(request, user: user, membership: membership, webhookId: webhookId, status: 200, top: "",
                 overlap: Self.defaultOverlap, overlapErrors: [])
    }

    /// `replay` (confirmed first) or `rotate-secret` (its overlap checked, confirmed, a fresh
    /// sign-in).
    func act(_ action: String, webhookId: String, _ request: HTTPRequest, user: ConsoleSite.Session,
             membership: ConsoleStore.Membership, form: [String: String]) throws -> RouteResult {
        guard webhookId.utf8.count <= 64 else { throw ConsoleSite.Refusal.notFound }
        return action == "replay"
            ? try replay(webhookId, request, user: user, membership: membership, form: form)
            : try rotateSecret(webhookId, request, user: user, membership: membership, form: form)
    }

    private func replay(_ webhookId: String, _ request: HTTPRequest, user: ConsoleSite.Session,
                        membership: ConsoleStore.Membership, form: [String: String]) throws -> RouteResult {
        let here = Self.path(membership, webhookId)
        guard form["confirm"] == "yes" else {
            return .now(ConsoleSite.html(ConsoleHTML.confirmation(
                user, app: (membership.appId, membership.appName, "webhooks"), question: "Replay the dead-lettered deliveries?",
                consequence: "Every delivery of this endpoint that was given up on is queued again and retried on the usual "
                    + "schedule, with the same webhook-id: a receiver that already handled one recognises it.",
                button: "Yes, replay", danger: false, action: "\(here)/replay", cancel: here)))
        }
        try site.audit(.adminReplayWebhookDeliveries, appId: membership.appId, user: user, target: "app", request: request,
                       detail: ["webhook_id": .string(webhookId), "via": "console"])
        var command = AdminV1.ManageWebhooks(appId: membership.appId, actor: "console:" + user.uid, action: "replay")
        command.webhookId = webhookId
        let site = self.site
        return send(command, request, user: user, membership: membership).flatMap { response in
            let count: Int = if case .number(let n)? = ConsoleSite.data(response)?["replayed"] { Int(n) } else { 0 }
            let top = response.status != 200
                ? ConsoleHTML.notice("error", "Not replayed: " + ConsoleSite.problem(response).message)
                : ConsoleHTML.notice("ok", count == 0 ? "No dead-lettered delivery to replay."
                                        : count == 1 ? "Queued 1 dead-lettered delivery again."
                                        : "Queued \(count) dead-lettered deliveries again.")
            return Self.rendered {
                try ConsoleWebhookEndpoint(site: site).page(request, user: user, membership: membership, webhookId: webhookId,
                                                            status: response.status, top: top,
                                                            overlap: Self.defaultOverlap, overlapErrors: [])
            }
        }
    }

    private func rotateSecret(_ webhookId: String, _ request: HTTPRequest, user: ConsoleSite.Session,
                              membership: ConsoleStore.Membership, form: [String: String]) throws -> RouteResult {
        let here = Self.path(membership, webhookId)
        let given = (form["overlap_seconds"] ?? Self.defaultOverlap).trimmingCharacters(in: .whitespaces)
        // The declared bounds, before any confirmation, audit row or command.
        let problem = Int(given).map { DeclaredBounds.problem($0, in: Self.overlapRange) } ?? "must be a whole number of seconds"
        guard let overlap = Int(given), problem == nil else {
            return try page(request, user: user, membership: membership, webhookId: webhookId, status: 422,
                            top: ConsoleHTML.notice("error", "Not rotated: check the field below."),
                            overlap: given, overlapErrors: problem.map { [$0] } ?? [])
        }
        guard form["confirm"] == "yes" else {
            return .now(ConsoleSite.html(ConsoleHTML.confirmation(
                user, app: (membership.appId, membership.appName, "webhooks"), question: "Rotate this endpoint's signing secret?",
                consequence: "A new secret is made now and shown once. The current one keeps signing too, beside it, for "
                    + "\(overlap) seconds: move your receiver to the new secret within that time.",
                button: "Yes, rotate", danger: false, action: "\(here)/rotate-secret", cancel: here,
                hidden: [("overlap_seconds", String(overlap))])))
        }
        try site.requireFreshSignIn(request, user: user)
        try site.audit(.adminRotateWebhookSecret, appId: membership.appId, user: user, target: "app", request: request,
                       detail: ["webhook_id": .string(webhookId), "overlap_seconds": JSONValue(overlap), "via": "console"])
        var command = AdminV1.ManageWebhooks(appId: membership.appId, actor: "console:" + user.uid, action: "rotate_secret")
        command.webhookId = webhookId
        command.overlapSeconds = Int32(overlap)
        let site = self.site
        return send(command, request, user: user, membership: membership).flatMap { response in
            let data = ConsoleSite.data(response)
            guard response.status == 200, case .string(let secret)? = data?["secret"] else {
                let problem = ConsoleSite.problem(response)
                return Self.rendered {
                    try ConsoleWebhookEndpoint(site: site).page(
                        request, user: user, membership: membership, webhookId: webhookId, status: response.status,
                        top: ConsoleHTML.notice("error", "Not rotated: " + problem.message), overlap: String(overlap),
                        overlapErrors: problem.fields["overlap_seconds"] ?? [])
                }
            }
            var until = ""
            if case .string(let end)? = data?["previous_secret_expires_at"], !end.isEmpty {
                until = " The previous secret signs too, beside it, until \(ConsoleHTML.escape(end))."
            }
            return .now(ConsoleSite.html(ConsoleHTML.secretShownOnce(
                user, app: (membership.appId, membership.appName, "webhooks"), title: "New signing secret",
                warning: "Copy this secret into your receiver now: it is shown only this once and can never be shown again.",
                codeId: "webhook-secret", secret: secret,
                hintHTML: "Your endpoint checks each delivery's webhook-signature header with it." + until, done: here)))
        }
    }

    /// The page: `top` (a notice), the endpoint (the worker's `get`), its delivery log (the
    /// worker's `deliveries`) and, for owners and admins, the two forms.
    private func page(_ request: HTTPRequest, user: ConsoleSite.Session, membership: ConsoleStore.Membership,
                      webhookId: String, status: Int, top: String, overlap: String, overlapErrors: [String]) throws -> RouteResult {
        guard webhookId.utf8.count <= 64 else { throw ConsoleSite.Refusal.notFound }
        var get = AdminV1.ManageWebhooks(appId: membership.appId, actor: "console:" + user.uid, action: "get")
        get.webhookId = webhookId
        let log = AdminV1.ManageWebhooks(appId: membership.appId, actor: "console:" + user.uid, action: "deliveries",
                                         webhookId: webhookId)
        let tab = (membership.appId, membership.appName, "webhooks")
        return send(get, request, user: user, membership: membership).flatMap { found in
            guard found.status == 200, let endpoint = ConsoleSite.data(found) else {
                let refusal = found.status == 404 ? ConsoleSite.Refusal.notFound
                    : ConsoleSite.Refusal(status: found.status, title: "Not available",
                                          message: "The endpoint could not be read: " + ConsoleSite.problem(found).message)
                return .now(ConsoleSite.html(ConsoleHTML.page(title: refusal.title, user: user, app: tab, body: """
                    <section class="card"><h1>\(ConsoleHTML.escape(refusal.title))</h1>\(ConsoleHTML.notice("error", refusal.message))
                    <p><a href="\(Self.list(membership))">← All endpoints</a></p></section>
                    """), status: refusal.status))
            }
            return self.send(log, request, user: user, membership: membership).flatMap { answered in
                var html = "<h1>Webhook endpoint</h1>" + top + Self.facts(endpoint)
                html += "<section class=\"card\"><h2>Delivery log</h2>"
                if answered.status == 200, case .array(let deliveries)? = ConsoleSite.data(answered) {
                    html += ConsoleWebhookDeliveries.table(deliveries)
                } else {
                    html += ConsoleHTML.notice("error", "The delivery log could not be read: " + ConsoleSite.problem(answered).message)
                }
                html += "</section>"
                if membership.role.mayChange {
                    html += Self.forms(user: user, membership: membership, webhookId: webhookId, overlap: overlap,
                                       overlapErrors: overlapErrors)
                }
                html += "<p><a href=\"\(Self.list(membership))\">← All endpoints</a></p>"
                return .now(ConsoleSite.html(ConsoleHTML.page(title: "Webhook endpoint", user: user, app: tab, body: html),
                                             status: status))
            }
        }
    }

    private func send(_ command: AdminV1.ManageWebhooks, _ request: HTTPRequest, user: ConsoleSite.Session,
                      membership: ConsoleStore.Membership) -> RouteResult {
        site.send(command, expecting: AdminV1.WebhookAnswer.self, appId: membership.appId, user: user, request: request) {
            JSONValue.parse(Data($0.dataJson.utf8)) ?? .null
        }
    }

    private static func facts(_ endpoint: JSONValue) -> String {
        func text(_ key: String) -> String { if case .string(let s)? = endpoint[key] { s } else { "" } }
        let events: [String] = if case .array(let items)? = endpoint["events"] {
            items.compactMap { if case .string(let s) = $0 { s } else { nil } }
        } else { [] }
        let enabled = endpoint["enabled"] == .bool(true)
        var rows: [(String, String)] = [
            ("URL", "<code id=\"webhook-url\">\(ConsoleHTML.escape(text("url")))</code>"),
            ("Events", ConsoleHTML.escape(events == ["*"] ? "every event" : events.joined(separator: ", "))),
            ("Description", ConsoleHTML.escape(text("description").isEmpty ? "—" : text("description"))),
            ("State", enabled ? "<span class=\"badge on\">enabled</span>" : "<span class=\"badge off\">disabled</span>"),
            ("Created", ConsoleHTML.escape(text("created_at"))),
        ]
        if !text("previous_secret_expires_at").isEmpty {
            rows.append(("Previous secret signs until", ConsoleHTML.escape(text("previous_secret_expires_at"))))
        }
        return "<section class=\"card\"><dl class=\"facts\">" + rows.map { "<dt>\($0.0)</dt><dd>\($0.1)</dd>" }.joined()
            + "</dl></section>"
    }

    private static func forms(user: ConsoleSite.Session, membership: ConsoleStore.Membership, webhookId: String,
                              overlap: String, overlapErrors: [String]) -> String {
        let here = path(membership, webhookId)
        let invalid = overlapErrors.isEmpty ? "" : " class=\"invalid\" aria-invalid=\"true\""
        return "<section class=\"card\"><h2>Dead-lettered deliveries</h2>"
            + "<p class=\"hint\">A delivery is given up on (dead) after its last retry. Once your receiver works again, "
            + "queue them again: each keeps its webhook-id.</p>"
            + "<form method=\"post\" action=\"\(here)/replay\">" + ConsoleHTML.csrfField(user)
            + "<div class=\"actions\"><button id=\"replay\" type=\"submit\" class=\"secondary\">Replay dead-lettered deliveries…</button></div></form>"
            + "</section><section class=\"card\"><h2>Signing secret</h2>"
            + "<form method=\"post\" action=\"\(here)/rotate-secret\">" + ConsoleHTML.csrfField(user)
            + "<label for=\"overlap_seconds\">Seconds the current secret keeps signing too</label>"
            + "<input id=\"overlap_seconds\" name=\"overlap_seconds\" type=\"number\" min=\"\(overlapRange.lowerBound)\" "
            + "max=\"\(overlapRange.upperBound)\" value=\"\(ConsoleHTML.escape(overlap))\"\(invalid)>"
            + "<p class=\"hint\">\(overlapRange.lowerBound) to \(overlapRange.upperBound) (7 days); 0: it stops at once. "
            + "Meanwhile each delivery carries a signature with each secret.</p>" + ConsoleHTML.fieldErrors(overlapErrors)
            + "<div class=\"actions\"><button id=\"rotate-secret\" type=\"submit\">Rotate signing secret…</button></div></form>"
            + "</section>"
    }

    static func list(_ membership: ConsoleStore.Membership) -> String {
        "/console/apps/\(ConsoleHTML.component(membership.appId))/webhooks"
    }

    static func path(_ membership: ConsoleStore.Membership, _ webhookId: String) -> String {
        list(membership) + "/" + ConsoleHTML.component(webhookId)
    }

    /// A page built after an answer; one that cannot be built sends the user back to the console's start.
    private static func rendered(_ build: () throws -> RouteResult) -> RouteResult {
        do {
            return try build()
        } catch {
            return .now(ConsoleSite.redirect("/console"))
        }
    }
}
