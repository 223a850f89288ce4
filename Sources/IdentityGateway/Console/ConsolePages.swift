import Foundation
import IdentityKit

/// The console's pages that read nothing but the session: sign-in (password, or a passkey
/// through console.js, which shows that form only where the browser has WebAuthn), the code
/// step, the apps list.
enum ConsolePages {
    /// `message`: why the last try failed; `notice`: what just happened (an invitation
    /// accepted, a password changed).
    static func signIn(message: String? = nil, notice: String? = nil, email: String = "") -> String {
        ConsoleHTML.page(title: "Sign in", user: nil, body: """
            <section class="card signin">
            <h1>Sign in to the console</h1>
            \(message.map { ConsoleHTML.notice("error", $0) } ?? "")\(notice.map { ConsoleHTML.notice("ok", $0) } ?? "")
            <form method="post" action="/console/sign-in">
            <label for="email">Email</label>
            <input id="email" name="email" type="email" autocomplete="username" required value="\(ConsoleHTML.escape(email))">
            <label for="password">Password</label>
            <input id="password" name="password" type="password" autocomplete="current-password" required>
            <div class="actions"><button id="sign-in" type="submit">Continue</button></div>
            <p class="hint"><a id="forgot-password" href="/console/reset">Forgot your password?</a></p>
            </form>
            <form id="passkey-sign-in" method="post" action="/console/sign-in/passkey" \
            data-options="/console/sign-in/passkey/options" hidden>
            <input type="hidden" name="flow_id"><input type="hidden" name="response">
            <p class="notice error" id="passkey-error" role="alert" hidden></p>
            <div class="actions"><button id="sign-in-passkey" class="secondary" type="button" data-passkey="get">Sign in with a passkey</button></div>
            </form>
            </section>
            """)
    }

    /// The second step: the challenge of the first travels in the form, the code is typed.
    static func codeForm(challenge: String, email: String, message: String?) -> String {
        ConsoleHTML.page(title: "Two-step verification", user: nil, body: """
            <section class="card signin">
            <h1>Two-step verification</h1>
            \(message.map { ConsoleHTML.notice("error", $0) } ?? "")
            <p class="hint">Enter the 6-digit code from your authenticator app (or a backup code).</p>
            <form method="post" action="/console/sign-in/code">
            <input type="hidden" name="challenge_token" value="\(ConsoleHTML.escape(challenge))">
            <input type="hidden" name="email" value="\(ConsoleHTML.escape(email))">
            <label for="code">Code</label>
            <input id="code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" required maxlength="32">
            <div class="actions"><button id="verify" type="submit">Sign in</button></div>
            </form>
            </section>
            """)
    }

    static func apps(_ user: ConsoleSite.Session) -> String {
        let rows = user.memberships.map { membership in
            let base = "/console/apps/\(ConsoleHTML.component(membership.appId))"
            return "<tr><td><a href=\"\(base)/connect\">\(ConsoleHTML.escape(membership.appName))</a></td>"
                + "<td><code>\(ConsoleHTML.escape(membership.appId))</code></td>"
                + "<td><span class=\"badge\">\(membership.role.rawValue)</span></td>"
                + "<td><a href=\"\(base)/settings\">Settings</a> · <a href=\"\(base)/users\">Users</a></td></tr>"
        }
        let table = rows.isEmpty
            ? ConsoleHTML.notice("info", "You hold no role in any app yet. An app's owner or the operator invites you by your email.")
            : "<table><thead><tr><th>App</th><th>App id</th><th>Your role</th><th></th></tr></thead><tbody>"
                + rows.joined() + "</tbody></table>"
        return ConsoleHTML.page(title: "Your apps", user: user, body: "<h1>Your apps</h1>\(table)")
    }
}
