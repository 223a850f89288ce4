import Foundation
import IdentityKit

/// An endpoint's delivery log as a table: the admin API's `WebhookDelivery` answers (newest
/// first), each with its state, attempts, next attempt and last attempts (time, HTTP status,
/// response time, outcome).
enum ConsoleWebhookDeliveries {
    static func table(_ deliveries: [JSONValue]) -> String {
        guard !deliveries.isEmpty else {
            return "<p class=\"hint\" id=\"no-deliveries\">No delivery yet: no event of this app has been sent here.</p>"
        }
        var html = "<table id=\"deliveries\"><thead><tr><th>Event</th><th>webhook-id</th><th>State</th><th>Attempts</th>"
            + "<th>Next attempt</th><th>Created</th><th>Last attempts</th></tr></thead><tbody>"
        for delivery in deliveries {
            let state = text(delivery["state"])
            let badge = state == "delivered" ? "on" : state == "dead" ? "off" : "pending"
            let attempts: Int = if case .number(let n)? = delivery["attempts"] { Int(n) } else { 0 }
            html += "<tr data-delivery=\"\(ConsoleHTML.escape(text(delivery["webhook_id"])))\">"
                + "<td>\(ConsoleHTML.escape(text(delivery["event_type"])))</td>"
                + "<td><code>\(ConsoleHTML.escape(text(delivery["webhook_id"])))</code></td>"
                + "<td><span class=\"badge \(badge)\" data-state=\"\(ConsoleHTML.escape(state))\">\(ConsoleHTML.escape(state))</span></td>"
                + "<td>\(attempts)</td><td>\(ConsoleHTML.escape(text(delivery["next_attempt_at"], or: "—")))</td>"
                + "<td>\(ConsoleHTML.escape(text(delivery["created_at"])))</td><td>\(lastAttempts(delivery["last_attempts"]))</td></tr>"
        }
        return html + "</tbody></table>"
    }

    /// Each attempt on a line: when, the HTTP status (— when none came), the response time and
    /// the outcome, with the error when there was one.
    private static func lastAttempts(_ value: JSONValue?) -> String {
        guard case .array(let attempts)? = value, !attempts.isEmpty else { return "—" }
        return "<ul class=\"attempts\">" + attempts.map { attempt in
            let status: String = if case .number(let n)? = attempt["status_code"] { String(Int(n)) } else { "—" }
            let ms: Int = if case .number(let n)? = attempt["response_ms"] { Int(n) } else { 0 }
            let error = text(attempt["error"])
            return "<li><span class=\"outcome\">\(ConsoleHTML.escape(text(attempt["outcome"])))</span> "
                + "\(ConsoleHTML.escape(text(attempt["at"]))) · HTTP <span class=\"status\">\(ConsoleHTML.escape(status))</span>"
                + " · \(ms) ms\(error.isEmpty ? "" : " · " + ConsoleHTML.escape(error))</li>"
        }.joined() + "</ul>"
    }

    private static func text(_ value: JSONValue?, or fallback: String = "") -> String {
        if case .string(let s)? = value, !s.isEmpty { s } else { fallback }
    }
}
