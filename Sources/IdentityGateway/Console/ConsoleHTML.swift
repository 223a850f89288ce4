import Foundation
import IdentityKit

/// The console's HTML, written by hand and escaped at every value: nothing a user, an app or a
/// setting holds is ever read as markup.
enum ConsoleHTML {
    static func escape(_ text: String) -> String { HTMLText.escape(text) }

    /// A query-string or path value.
    static func component(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? ""
    }

    /// The page around `body`: its own stylesheet and script only, a header with the signed-in
    /// console user and sign-out, and the app's tabs when the page is of one app.
    static func page(title: String, user: ConsoleSite.Session?, app: (id: String, name: String, tab: String)? = nil,
                     body: String) -> String {
        var header = "<header class=\"top\"><a class=\"brand\" href=\"/console\">Identity console</a>"
        if let user {
            header += "<span class=\"who\">\(escape(user.email))</span>"
                + "<a id=\"account\" href=\"/console/account\">Account</a>"
                + "<form method=\"post\" action=\"/console/sign-out\">\(csrfField(user))"
                + "<button class=\"secondary\" type=\"submit\">Sign out</button></form>"
        }
        header += "</header>"
        var nav = ""
        if let app {
            let base = "/console/apps/\(component(app.id))"
            let tabs = [("connect", "Connect"), ("settings", "Settings"), ("users", "Users"), ("keys", "Keys"), ("webhooks", "Webhooks"), ("members", "Members"),
                        ("audit", "Audit log")].map { slug, label in
                "<a href=\"\(base)/\(slug)\"\(slug == app.tab ? " class=\"current\" aria-current=\"page\"" : "")>\(label)</a>"
            }.joined()
            nav = "<nav class=\"app\"><span class=\"name\">\(escape(app.name))</span>\(tabs)</nav>"
        }
        return """
            <!doctype html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>\(escape(title)) · Identity console</title>
            <link rel="icon" href="data:,">
            <link rel="stylesheet" href="/console/console.css">
            <script src="/console/console.js" defer></script>
            </head>
            <body>
            \(header)
            \(nav)
            <main>
            \(body)
            </main>
            </body>
            </html>
            """
    }

    static func csrfField(_ user: ConsoleSite.Session) -> String {
        "<input type=\"hidden\" name=\"csrf\" value=\"\(escape(user.csrfToken))\">"
    }

    static func notice(_ kind: String, _ text: String) -> String {
        "<p class=\"notice \(kind)\" role=\"\(kind == "error" ? "alert" : "status")\">\(escape(text))</p>"
    }

    /// The page every console action shows before it acts: the question, what follows, and a
    /// form posting `confirm=yes` (with `hidden` fields carried over) back to `action`.
    static func confirmation(_ user: ConsoleSite.Session, app: (id: String, name: String, tab: String),
                             question: String, consequence: String, button: String, danger: Bool,
                             action: String, cancel: String, hidden: [(String, String)] = []) -> String {
        let carried = hidden.map { "<input type=\"hidden\" name=\"\(escape($0.0))\" value=\"\(escape($0.1))\">\n" }.joined()
        return page(title: "Confirm", user: user, app: app, body: """
            <section class="card"><h1>\(escape(question))</h1>
            <p>\(escape(consequence))</p>
            <form method="post" action="\(escape(action))">\(csrfField(user))
            \(carried)<input type="hidden" name="confirm" value="yes">
            <div class="actions"><button id="confirm" type="submit"\(danger ? " class=\"danger\"" : "")>\(escape(button))</button>
            <a class="button secondary" href="\(escape(cancel))">Cancel</a></div>
            </form></section>
            """)
    }

    /// The page that shows a new secret once (a secret key, a webhook signing secret): a warning
    /// that it will never be shown again, the secret in `<code id=codeId>`, what it is for
    /// (`hintHTML`, already escaped) and the way back. Served `no-store` like every console page.
    static func secretShownOnce(_ user: ConsoleSite.Session, app: (id: String, name: String, tab: String), title: String,
                                warning: String, codeId: String, secret: String, hintHTML: String, done: String) -> String {
        page(title: title, user: user, app: app, body: """
            <section class="card secret"><h1>\(escape(title))</h1>
            \(notice("error", warning))
            <p><code id="\(escape(codeId))">\(escape(secret))</code></p>
            <p class="hint">\(hintHTML)</p>
            <p><a class="button" href="\(escape(done))">Done</a></p></section>
            """)
    }

    /// A form's labelled input: what was typed (escaped), marked invalid with its problems below
    /// it, after its hint when it has one.
    static func input(id: String, name: String, label: String, type: String = "text", value: String, hint: String? = nil,
                      errors: [String], autocompleteOff: Bool = false) -> String {
        let invalid = errors.isEmpty ? "" : " class=\"invalid\" aria-invalid=\"true\""
        return "<label for=\"\(id)\">\(label)</label>"
            + "<input id=\"\(id)\" name=\"\(name)\" type=\"\(type)\" \(autocompleteOff ? "autocomplete=\"off\" " : "")"
            + "value=\"\(escape(value))\"\(invalid)>"
            + (hint.map { "<p class=\"hint\">\(escape($0))</p>" } ?? "") + fieldErrors(errors)
    }

    /// A field's messages, next to the field (the API's `errors[].location` of that field).
    static func fieldErrors(_ messages: [String]) -> String {
        messages.map { "<p class=\"field-error\">\(escape($0))</p>" }.joined()
    }
}
