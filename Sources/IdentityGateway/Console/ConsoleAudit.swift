import Foundation
import IdentityKit

/// An app's Audit log page: the admin API's own read (`AuditLog.list`, as `GET /v1/admin/audit`),
/// newest first, 50 a page, filtered by exact actor, action or target. Every role sees it.
struct ConsoleAudit {
    let site: ConsoleSite
    static let pageSize = 50

    func list(_ request: HTTPRequest, user: ConsoleSite.Session, membership: ConsoleStore.Membership) throws -> String {
        func filter(_ name: String) -> String? {
            guard let value = request.query[name].map({ TextScanning.trimmed(Substring($0)) }), !value.isEmpty,
                  value.utf8.count <= 128, !value.utf8.contains(0) else { return nil }
            return value
        }
        var query = AuditLog.Query(actor: filter("actor"), action: filter("action"), target: filter("target"),
                                   limit: Self.pageSize)
        if let cursor = request.query["cursor"], let id = Int64(cursor), id > 0 { query.before = id }
        let rows = try site.audit.list(appId: membership.appId, query)
        let base = "/console/apps/\(ConsoleHTML.component(membership.appId))/audit"
        let inputs = [("actor", "Actor", "console:… or secret_key:…"), ("action", "Action", "admin.users.disable"),
                      ("target", "Target", "user:… or app")].map { name, label, hint in
            "<div><label for=\"\(name)\">\(label)</label><input id=\"\(name)\" name=\"\(name)\" type=\"search\" "
                + "placeholder=\"\(hint)\" value=\"\(ConsoleHTML.escape(filter(name) ?? ""))\"></div>"
        }.joined()
        var html = "<h1>Audit log</h1><form class=\"search\" method=\"get\" action=\"\(base)\">\(inputs)"
            + "<div><button id=\"filter\" type=\"submit\">Filter</button></div></form>"
        if rows.isEmpty {
            html += ConsoleHTML.notice("info", "No entries match.")
        } else {
            html += "<table id=\"audit\"><thead><tr><th>Time</th><th>Actor</th><th>Action</th><th>Target</th><th>IP</th></tr></thead><tbody>"
            for row in rows {
                html += "<tr><td>\(ConsoleHTML.escape(Timestamp.rfc3339(microsecondsSinceEpoch: row.atMicros)))</td>"
                    + "<td>\(ConsoleHTML.escape(row.entry.actor))</td><td>\(ConsoleHTML.escape(row.entry.action))</td>"
                    + "<td>\(ConsoleHTML.escape(row.entry.target ?? ""))</td><td>\(ConsoleHTML.escape(row.entry.ip ?? ""))</td></tr>"
            }
            html += "</tbody></table>"
            if rows.count == Self.pageSize, let last = rows.last?.id {
                let kept = ["actor", "action", "target"].compactMap { name in filter(name).map { "&amp;\(name)=\(ConsoleHTML.component($0))" } }
                html += "<p class=\"pager\"><a id=\"next-page\" href=\"\(base)?cursor=\(last)\(kept.joined())\">Older entries →</a></p>"
            }
        }
        return ConsoleHTML.page(title: "Audit log", user: user, app: (membership.appId, membership.appName, "audit"), body: html)
    }
}
