import Foundation
import IdentityKit

/// The Account page and its steps (`ConsoleAccount`), every value escaped.
enum ConsoleAccountPages {
    /// Two-step verification's state and the passkeys, from `GET /v1/me/mfa` and
    /// `GET /v1/me/passkeys` (nil when the API did not answer them).
    static func account(_ user: ConsoleSite.Session, mfa: JSONValue?, passkeys: JSONValue?, notice: String?) -> String {
        let mfaOn = mfa?["enabled"] == .bool(true)
        var items: [JSONValue] = []
        if case .array(let list)? = passkeys { items = list }
        var body = "<h1>Your account</h1>\(notice ?? "")"
        if user.mustSetUpTwoStep {
            body += ConsoleHTML.notice("info", mfaOn || !items.isEmpty
                ? "This console needs a sign-in with two-step verification or a passkey. Sign out, then sign in with "
                    + "your code or your passkey to reach your apps."
                : "This console needs two-step verification. Set up an authenticator app or add a passkey below, then "
                    + "sign out and sign in with it to reach your apps.")
        }
        body += "<section class=\"card\" id=\"two-step\"><h2>Two-step verification</h2>"
        if let mfa {
            var methods: [String] = []
            if case .array(let list)? = mfa["methods"] { methods = list.compactMap { if case .string(let m) = $0 { m } else { nil } } }
            body += "<dl class=\"facts\"><dt>State</dt><dd><span id=\"mfa-state\" class=\"badge \(mfaOn ? "on" : "off")\">"
                + (mfaOn ? "on" : "off") + "</span></dd>"
            if mfaOn {
                body += "<dt>Methods</dt><dd>\(ConsoleHTML.escape(methods.joined(separator: ", ")))</dd>"
                if case .number(let left)? = mfa["backup_codes_remaining"] {
                    body += "<dt>Backup codes left</dt><dd id=\"backup-codes-left\">\(Int(left))</dd>"
                }
            }
            body += "</dl>"
            if mfaOn {
                body += "<p class=\"hint\">Every sign-in with your password asks for a code from your authenticator app "
                    + "(or a backup code).</p>"
            } else {
                body += "<p class=\"hint\">With it on, a sign-in with your password also asks for a 6-digit code from an "
                    + "authenticator app on your phone.</p>"
                    + "<form method=\"post\" action=\"/console/account/totp\">\(ConsoleHTML.csrfField(user))"
                    + "<div class=\"actions\"><button id=\"start-totp\" type=\"submit\">Set up an authenticator app</button>"
                    + "</div></form>"
            }
        } else {
            body += ConsoleHTML.notice("error", "The state of two-step verification could not be read. Reload the page.")
        }
        body += "</section><section class=\"card\" id=\"passkeys-card\"><h2>Passkeys</h2>"
            + "<p class=\"hint\">A passkey signs you in with this device's screen lock or a security key, with no "
            + "password, and cannot be used on a look-alike site.</p>"
        if passkeys == nil {
            body += ConsoleHTML.notice("error", "Your passkeys could not be read. Reload the page.")
        } else if items.isEmpty {
            body += "<p id=\"no-passkeys\">No passkey yet.</p>"
        } else {
            body += "<table id=\"passkeys\"><thead><tr><th>Name</th><th>Added</th><th>Last used</th><th></th></tr></thead><tbody>"
            for item in items {
                guard case .string(let id)? = item["id"] else { continue }
                let text = { (key: String) -> String in
                    if case .string(let value)? = item[key] { return ConsoleHTML.escape(value) } else { return "never" }
                }
                body += "<tr data-passkey=\"\(ConsoleHTML.escape(id))\"><td>\(text("name"))</td><td>\(text("created_at"))</td>"
                    + "<td>\(text("last_used_at"))</td><td><form class=\"inline\" method=\"post\" "
                    + "action=\"/console/account/passkeys/\(ConsoleHTML.component(id))/remove\">\(ConsoleHTML.csrfField(user))"
                    + "<button id=\"remove-\(ConsoleHTML.escape(id))\" class=\"secondary\" type=\"submit\">Remove</button>"
                    + "</form></td></tr>"
            }
            body += "</tbody></table>"
        }
        // console.js asks for the options, lets the browser make the credential, and posts it here.
        body += """
            <form id="passkey-register" method="post" action="/console/account/passkeys" \
            data-options="/console/account/passkeys/options">\(ConsoleHTML.csrfField(user))
            <input type="hidden" name="response">
            <label for="passkey-name">Name</label>
            <input id="passkey-name" name="name" type="text" maxlength="100" value="Console passkey">
            <p class="notice error" id="passkey-error" role="alert" hidden></p>
            <div class="actions"><button id="add-passkey" type="button" data-passkey="create">Add a passkey</button></div>
            </form></section>
            """
        return ConsoleHTML.page(title: "Your account", user: user, body: body)
    }

    /// The authenticator app's setup: the QR code and the key (when just started), then the code
    /// that turns it on. The QR code is an image (`data:` under the console's `img-src`): an SVG
    /// shown as an image runs no script and loads nothing, whatever it holds.
    static func totpSetup(_ user: ConsoleSite.Session, secret: String?, qrSVG: String?, message: String?) -> String {
        var body = "<section class=\"card\"><h1>Set up an authenticator app</h1>"
            + (message.map { ConsoleHTML.notice("error", $0) } ?? "")
        if let secret, let qrSVG {
            body += "<p>Scan this QR code with your authenticator app, or type the key into it.</p>"
                + "<img id=\"totp-qr\" class=\"qr\" alt=\"QR code of the authenticator key\" "
                + "src=\"data:image/svg+xml;base64,\(Data(qrSVG.utf8).base64EncodedString())\">"
                + "<p>Key: <code id=\"totp-secret\">\(ConsoleHTML.escape(secret))</code></p>"
        } else {
            body += "<p class=\"hint\">Enter a current code of the authenticator you just set up, or start again.</p>"
        }
        body += """
            <form method="post" action="/console/account/totp/confirm">\(ConsoleHTML.csrfField(user))
            <label for="code">Code from the app</label>
            <input id="code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" required maxlength="32">
            <div class="actions"><button id="confirm-totp" type="submit">Turn on</button>
            <a class="button secondary" href="/console/account">Cancel</a></div>
            </form></section>
            """
        return ConsoleHTML.page(title: "Set up an authenticator app", user: user, body: body)
    }

    /// Two-step verification is on: the backup codes, this once.
    static func backupCodes(_ user: ConsoleSite.Session, codes: [String]) -> String {
        let list = codes.map { "<li><code>\(ConsoleHTML.escape($0))</code></li>" }.joined()
        let next = user.requiresStrongSignIn && !user.signedInStrongly
            ? ConsoleHTML.notice("info", "Sign out, then sign in with your password and a code to reach your apps.") : ""
        return ConsoleHTML.page(title: "Two-step verification is on", user: user, body: """
            <section class="card secret"><h1>Two-step verification is on</h1>
            \(ConsoleHTML.notice("error", "Keep these backup codes somewhere safe now: each signs you in once when your "
                + "authenticator app is not at hand. They are shown only this once."))
            <ul id="backup-codes" class="codes">\(list)</ul>
            \(next)
            <p><a class="button" href="/console/account">Done</a></p></section>
            """)
    }
}
