import Foundation
import IdentityKit

/// The Keys page's secret-key part: "Rotate secret key", after a confirmation and a fresh
/// sign-in, as the admin API's `RotateSecretKey` command (`POST /v1/admin/secret-keys/rotate`).
/// The new key is on the answer page only, once: only its hash is stored, it is never in the
/// audit log, and no later page can show it.
struct ConsoleSecretKeys {
    let site: ConsoleSite

    /// The overlap the admin API offers: `RotateSecretKeyRequest.overlap_seconds`'s declared
    /// default and bounds, which its body reader and its worker check too; a value outside them is
    /// refused here, next to the field, before anything is audited.
    static let defaultOverlap = String(GatewayV1.RotateSecretKeyRequest.overlapSecondsDefault)
    static let overlapRange = GatewayV1.RotateSecretKeyRequest.overlapSecondsRange

    static func section(_ user: ConsoleSite.Session, _ membership: ConsoleStore.Membership,
                        overlap: String, errors: [String]) -> String {
        var html = "<h2>Secret keys</h2><p class=\"hint\">The app's backend calls the admin API with its secret key. "
            + "Only its hash is stored: a new key is shown once, when it is made.</p>"
        guard membership.role.mayChange else { return html }
        html += "<form method=\"post\" action=\"/console/apps/\(ConsoleHTML.component(membership.appId))/keys/secret/rotate\">"
            + ConsoleHTML.csrfField(user)
            + "<label for=\"overlap_seconds\">Seconds the current keys keep working</label>"
            + "<input id=\"overlap_seconds\" name=\"overlap_seconds\" type=\"number\" min=\"\(overlapRange.lowerBound)\" "
            + "max=\"\(overlapRange.upperBound)\" "
            + "value=\"\(ConsoleHTML.escape(overlap))\">"
            + "<p class=\"hint\">\(overlapRange.lowerBound) to \(overlapRange.upperBound) (30 days); 0: they stop at once. A day (86400) gives your backends "
            + "time to move to the new key.</p>" + ConsoleHTML.fieldErrors(errors)
            + "<div class=\"actions\"><button id=\"rotate-secret\" type=\"submit\">Rotate secret key…</button></div></form>"
        return html
    }

    func rotate(_ request: HTTPRequest, user: ConsoleSite.Session, membership: ConsoleStore.Membership,
                form: [String: String]) throws -> RouteResult {
        let given = (form["overlap_seconds"] ?? Self.defaultOverlap).trimmingCharacters(in: .whitespaces)
        guard let overlap = Int(given) else {
            return try keysPage(user, membership, notice: ConsoleHTML.notice("error", "Not rotated: check the field below."),
                                overlap: given, errors: ["must be a whole number of seconds"], status: 422)
        }
        if let problem = DeclaredBounds.problem(overlap, in: Self.overlapRange) {
            return try keysPage(user, membership, notice: ConsoleHTML.notice("error", "Not rotated: check the field below."),
                                overlap: given, errors: [problem], status: 422)
        }
        guard form["confirm"] == "yes" else {
            return .now(ConsoleSite.html(ConsoleHTML.confirmation(
                user, app: (membership.appId, membership.appName, "keys"), question: "Rotate the secret key?",
                consequence: "A new secret key is made now and shown once. The keys your backends use now keep working "
                    + "for \(overlap) seconds, then stop.",
                button: "Yes, rotate", danger: false, action: request.path,
                cancel: "/console/apps/\(ConsoleHTML.component(membership.appId))/keys",
                hidden: [("overlap_seconds", String(overlap))])))
        }
        try site.requireFreshSignIn(request, user: user)
        try site.audit(.adminRotateSecretKey, appId: membership.appId, user: user, target: "app", request: request,
                       detail: ["via": "console", "overlap_seconds": .number(Double(overlap))])
        let command = AdminV1.RotateSecretKey(appId: membership.appId, overlapSeconds: Int32(overlap), actor: "console:" + user.uid)
        let site = self.site
        let appId = membership.appId
        return site.send(command, expecting: AdminV1.SecretKeyRotated.self, appId: appId, user: user, request: request) {
            site.secretKeys.forget(appId: appId)
            return .object(["key_id": .string($0.keyId), "secret_key": .string($0.secretKey),
                            "previous_keys_expire_at": .string($0.previousKeysExpireAt)])
        }
        .flatMap { response in
            let data = ConsoleSite.data(response)
            guard response.status == 200, case .string(let keyId)? = data?["key_id"],
                  case .string(let secret)? = data?["secret_key"] else {
                let problem = ConsoleSite.problem(response)
                let errors = problem.fields["overlap_seconds"] ?? []
                let notice = ConsoleHTML.notice("error", "Not rotated: " + problem.message)
                do {
                    return try ConsoleSecretKeys(site: site).keysPage(user, membership, notice: notice, overlap: String(overlap),
                                                                      errors: errors, status: response.status)
                } catch {
                    return .now(ConsoleSite.redirect("/console/apps/\(ConsoleHTML.component(appId))/keys"))
                }
            }
            var until = ""
            if case .string(let end)? = data?["previous_keys_expire_at"], !end.isEmpty {
                until = " The previous keys keep working until \(ConsoleHTML.escape(end))."
            }
            return .now(ConsoleSite.html(ConsoleHTML.secretShownOnce(
                user, app: (membership.appId, membership.appName, "keys"), title: "New secret key",
                warning: "Copy this key into your backend's secrets now: it is shown only this once "
                    + "and can never be shown again (only its hash is stored).",
                codeId: "secret-key", secret: secret,
                hintHTML: "Key id <code>\(ConsoleHTML.escape(keyId))</code>." + until,
                done: "/console/apps/\(ConsoleHTML.component(appId))/keys")))
        }
    }

    private func keysPage(_ user: ConsoleSite.Session, _ membership: ConsoleStore.Membership, notice: String,
                          overlap: String, errors: [String], status: Int) throws -> RouteResult {
        .now(ConsoleSite.html(try ConsoleKeys(site: site).show(user: user, membership: membership, notice: notice,
                                                               overlap: overlap, overlapErrors: errors), status: status))
    }
}
