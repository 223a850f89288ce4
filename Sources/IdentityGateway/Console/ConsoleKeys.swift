import Foundation
import IdentityKit

/// An app's Keys page: its published signing keys with their states (the JWKS's own read), and
/// "Rotate signing key", after a confirmation and a fresh sign-in, as the admin API's
/// `adminRotateSigningKey` operation called as the console user (`ConsoleSite.call`): the next key is published at once and signs one JWKS cache
/// period later, so no verifier meets a token whose key it has not fetched. Below them, the
/// secret key's rotation (`ConsoleSecretKeys`).
struct ConsoleKeys {
    let site: ConsoleSite

    func show(user: ConsoleSite.Session, membership: ConsoleStore.Membership, notice: String?,
              overlap: String = ConsoleSecretKeys.defaultOverlap, overlapErrors: [String] = []) throws -> String {
        let keys = try site.signingKeys.published(appId: membership.appId)
        var html = "<h1>Signing keys</h1>" + (notice ?? "")
        html += "<p class=\"hint\">Access tokens are signed with the current key; backends verify them with the keys at "
            + "<code>/v1/apps/\(ConsoleHTML.escape(membership.appId))/jwks.json</code>.</p>"
        html += "<table id=\"keys\"><thead><tr><th>Key id</th><th>Algorithm</th><th>State</th><th>Signs from</th><th>Retires</th></tr></thead><tbody>"
        for key in keys {
            let state = key.state == "current" ? "on" : key.state == "previous" ? "off" : ""
            html += "<tr><td><code>\(ConsoleHTML.escape(key.kid))</code></td><td>\(key.algorithm.rawValue)</td>"
                + "<td><span class=\"badge \(state)\">\(ConsoleHTML.escape(key.state))</span></td>"
                + "<td>\(Self.time(key.activatesAt))</td><td>\(key.retiresAt.map(Self.time) ?? "—")</td></tr>"
        }
        html += "</tbody></table>"
        if membership.role.mayChange {
            html += "<form method=\"post\" action=\"/console/apps/\(ConsoleHTML.component(membership.appId))/keys/rotate\">"
                + ConsoleHTML.csrfField(user)
                + "<div class=\"actions\"><button id=\"rotate\" type=\"submit\">Rotate signing key…</button></div></form>"
        }
        html += ConsoleSecretKeys.section(user, membership, overlap: overlap, errors: overlapErrors)
        return ConsoleHTML.page(title: "Keys", user: user, app: (membership.appId, membership.appName, "keys"), body: html)
    }

    func rotate(_ request: HTTPRequest, user: ConsoleSite.Session, membership: ConsoleStore.Membership,
                form: [String: String]) throws -> RouteResult {
        guard form["confirm"] == "yes" else {
            return .now(ConsoleSite.html(ConsoleHTML.confirmation(
                user, app: (membership.appId, membership.appName, "keys"), question: "Rotate the signing key?",
                consequence: "A new key is published now and starts signing one JWKS cache period later; the current key "
                    + "keeps verifying its tokens until they have expired.",
                button: "Yes, rotate", danger: false, action: request.path,
                cancel: "/console/apps/\(ConsoleHTML.component(membership.appId))/keys")))
        }
        try site.requireFreshSignIn(request, user: user)
        let site = self.site
        return site.call(user, appId: membership.appId, request: request) { try await $0.adminRotateSigningKey(as: $1) }
            .flatMap { response in
                let data = ConsoleSite.data(response)
                let notice: String
                if response.status == 200, case .string(let kid)? = data?["kid"], case .string(let from)? = data?["signs_from"] {
                    notice = ConsoleHTML.notice("ok", "New key \(kid) published; it signs from \(from).")
                } else {
                    notice = ConsoleHTML.notice("error", "Not rotated: " + ConsoleSite.problem(response).message)
                }
                do {
                    return .now(ConsoleSite.html(try ConsoleKeys(site: site).show(user: user, membership: membership, notice: notice),
                                                 status: response.status))
                } catch {
                    return .now(ConsoleSite.redirect("/console/apps/\(ConsoleHTML.component(membership.appId))/keys"))
                }
            }
    }

    static func time(_ date: Date) -> String {
        ConsoleHTML.escape(Timestamp.rfc3339(microsecondsSinceEpoch: Int64(date.timeIntervalSince1970 * 1_000_000)))
    }
}
