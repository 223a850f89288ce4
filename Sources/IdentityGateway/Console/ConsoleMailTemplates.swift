import Foundation
import IdentityKit

/// The Mail section's message texts: the app's own text of one part of one kind of message in
/// one language, saved as the admin API's `mail_templates` (`KIND.PART[.LANGUAGE]`), and a
/// preview that renders the message with sample values through the mailer's own renderer
/// (`MailRenderer`, `MessageTemplates`). The preview is shown as text, the HTML part as its
/// escaped source: nothing a template holds runs or loads in the console.
struct ConsoleMailTemplates {
    static let sectionId = "templates"
    let site: ConsoleSite

    /// The editor's state: which text, and what it says.
    struct Editor: Sendable {
        var kind = "email_code"
        var part = "subject"
        /// Empty: the app's default language (a text without a language).
        var language = ""
        var text = ""
        /// The rendered preview's HTML (escaped already), when asked.
        var preview: String?

        init() {}

        /// The text `key` (`?template=KIND.PART[.LANGUAGE]`) as the app has it.
        init(opening key: String?, settings: JSONValue) {
            guard let key, AppSettingsUpdate.templateTarget(key) != nil else { return }
            let parts = key.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            kind = parts[0]
            part = parts[1]
            language = parts.count == 3 ? parts[2] : ""
            if case .string(let stored)? = settings["mail_templates"]?[key] { text = stored }
        }

        init(form: [String: String]) {
            kind = form["template_kind"] ?? ""
            part = form["template_part"] ?? ""
            language = TextScanning.trimmed(Substring(form["template_language"] ?? ""))
            text = (form["template_text"] ?? "").replacingOccurrences(of: "\r\n", with: "\n")
        }

        var key: String { language.isEmpty ? "\(kind).\(part)" : "\(kind).\(part).\(language)" }
    }

    func post(_ request: HTTPRequest, user: ConsoleSite.Session, membership: ConsoleStore.Membership,
              form: [String: String]) throws -> RouteResult {
        let editor = Editor(form: form)
        let body: [String: JSONValue] = ["mail_templates": .object([editor.key: .string(editor.text)])]
        let problems = ConsoleSettings.problems(body)
        let settingsPage = ConsoleSettings(site: site)
        let place: @Sendable ([(setting: String, message: String)]) -> [String: [String]] = { [editor] problems in
            Self.place(problems, editor)
        }
        if !problems.isEmpty || form["intent"] == "preview" {
            let refused = !problems.isEmpty
            return settingsPage.read(request, user: user, membership: membership) { settings in
                var shown = editor
                if !refused { shown.preview = Self.preview(editor, settings: settings, appName: membership.appName) }
                let notice = refused
                    ? ConsoleHTML.notice("error", "Nothing was saved: fix the fields marked below.")
                    : ConsoleHTML.notice("info", "A preview with sample values; nothing was saved.")
                return ConsoleSite.html(ConsoleSettings.page(
                    user: user, membership: membership, settings: settings,
                    outcome: .init(section: Self.sectionId, errors: refused ? place(problems) : [:], notice: notice),
                    editor: shown), status: refused ? 422 : 200)
            }
        }
        return try settingsPage.update(body, section: Self.sectionId, freshSignIn: false, request, user: user,
                                       membership: membership, editor: editor, place: place, typed: form)
    }

    /// A `mail_templates` problem belongs to the field it is about: the language when that is
    /// malformed, the part when the kind has no such part (an SMS has only text), else the text.
    static func place(_ problems: [(setting: String, message: String)], _ editor: Editor) -> [String: [String]] {
        var placed: [String: [String]] = [:]
        for problem in problems {
            var field = "template_text"
            if AppSettingsUpdate.templateTarget(editor.key) == nil {
                field = !editor.language.isEmpty && LanguageTag.normalized(editor.language) == nil ? "template_language" : "template_part"
            }
            placed[problem.setting == "mail_templates" ? field : "", default: []].append(problem.message)
        }
        return placed
    }

    /// The message the editor's text makes, with every other part as the app has it now.
    static func preview(_ editor: Editor, settings: JSONValue, appName: String) -> String {
        var overrides = storedTexts(settings)
        guard let target = AppSettingsUpdate.templateTarget(editor.key) else { return "" }
        overrides[target.kind, default: [:]][target.part] = editor.text.isEmpty ? nil : editor.text
        let defaultLocale: String? = if case .string(let tag)? = settings["default_locale"] { tag } else { nil }
        let templates = MessageTemplates(overrides: overrides, defaultLanguage: defaultLocale)
        let language = LanguageTag.normalized(editor.language) ?? templates.defaultLanguage
        let values = sampleValues(kind: editor.kind, settings: settings, appName: appName)
        let renderer = MailRenderer()
        func row(_ id: String, _ label: String, _ text: String) -> String {
            "<dt>\(label)</dt><dd><pre id=\"\(id)\">\(ConsoleHTML.escape(text))</pre></dd>"
        }
        var html = "<div class=\"preview\" id=\"preview\"><h3>Preview (\(ConsoleHTML.escape(language)))</h3><dl class=\"facts\">"
        if SmsKind.names.contains(editor.kind) {
            html += row("preview-sms", "SMS", renderer.renderSms(kind: editor.kind, templates: templates, language: language, values: values))
        } else {
            let mail = renderer.render(kind: editor.kind, templates: templates, language: language, values: values)
            html += row("preview-subject", "Subject", mail.subject) + row("preview-text", "Text", mail.text)
                + row("preview-html", "HTML (source)", mail.html)
            if editor.kind.hasPrefix("security_alert_") {
                let push = renderer.renderPush(kind: editor.kind, templates: templates, language: language, values: values)
                html += row("preview-push-title", "Push title", push.title) + row("preview-push-body", "Push body", push.body)
            }
        }
        return html + "</dl><p class=\"hint\">Sample values: \(ConsoleHTML.escape(values.keys.sorted().map { "{{\($0)}}" }.joined(separator: ", "))). "
            + "Links appear once a deep-link URL is set (Clients & domains).</p></div>"
    }

    /// The values the mailer fills in, made up; the link as the mailer makes it from the app's
    /// deep link.
    static func sampleValues(kind: String, settings: JSONValue, appName: String) -> [String: String] {
        let code = "123456", email = "ada@example.com"
        var link = ""
        if let mode = MailRenderer.linkModes[kind], case .string(let deepLink)? = settings["deep_link_url"], !deepLink.isEmpty {
            link = mode == "sign_in" ? MailRenderer.magicLink(deepLink: deepLink, email: email, code: code)
                : MailRenderer.actionLink(deepLink: deepLink, mode: mode, email: email, code: code)
        }
        return ["app_name": appName, "code": code, "link": link, "email": email, "device": "Safari on iPhone",
                "ip": "203.0.113.7", "time": "2026-01-15 09:30 UTC", "provider": "Google"]
    }

    /// The app's texts by kind and part, as the mailer reads them.
    static func storedTexts(_ settings: JSONValue) -> [String: [String: String]] {
        guard case .object(let flat)? = settings["mail_templates"] else { return [:] }
        var texts: [String: [String: String]] = [:]
        for (key, value) in flat {
            guard case .string(let text) = value, let target = AppSettingsUpdate.templateTarget(key) else { continue }
            texts[target.kind, default: [:]][target.part] = text
        }
        return texts
    }

    /// The card: the app's texts, the editor (a viewer sees the chosen text read-only) and the preview.
    static func html(user: ConsoleSite.Session, membership: ConsoleStore.Membership, settings: JSONValue, editor: Editor,
                     outcome: ConsoleSettings.Outcome?, editable: Bool) -> String {
        let base = "/console/apps/\(ConsoleHTML.component(membership.appId))/settings"
        let errors = outcome?.errors ?? [:]
        var html = "<section class=\"card\" id=\"\(sectionId)\"><h2>Message texts</h2><p class=\"hint\">"
            + ConsoleHTML.escape("Your own words for each message your users get (mails, security alerts and their push "
                + "notifications, texts), per language. A part you leave alone is the built-in text, which exists in "
                + "en, de, fr, es, pt-BR and ja. Placeholders: {{app_name}}, {{code}}, {{link}}, {{email}}; alerts also "
                + "{{device}}, {{ip}}, {{time}}, {{provider}}.") + "</p>"
            + (outcome?.notice ?? "") + ConsoleHTML.fieldErrors(errors[""] ?? [])
        let stored: [(String, String)] = {
            guard case .object(let flat)? = settings["mail_templates"] else { return [] }
            return flat.keys.sorted().map { key in (key, { if case .string(let text)? = flat[key] { text } else { "" } }()) }
        }()
        if stored.isEmpty {
            html += "<p id=\"templates-set\">The app uses the built-in texts.</p>"
        } else {
            html += "<table id=\"templates-set\"><thead><tr><th>Text</th><th>Starts with</th><th></th></tr></thead><tbody>"
                + stored.map { key, text in
                    "<tr><td><code>\(ConsoleHTML.escape(key))</code></td><td>\(ConsoleHTML.escape(String(text.prefix(80))))</td>"
                        + "<td><a href=\"\(base)?template=\(ConsoleHTML.component(key))#\(sectionId)\">\(editable ? "Edit" : "View")</a></td></tr>"
                }.joined() + "</tbody></table>"
        }
        let locked = editable ? "" : " disabled"
        func select(_ name: String, _ label: String, _ options: [String], _ chosen: String) -> String {
            "<label for=\"\(name)\">\(label)</label><select id=\"\(name)\" name=\"\(name)\"\(locked)>"
                + options.map { "<option\($0 == chosen ? " selected" : "")>\(ConsoleHTML.escape($0))</option>" }.joined()
                + "</select>" + ConsoleHTML.fieldErrors(errors[name] ?? [])
        }
        html += editable
            ? "<form method=\"post\" action=\"\(base)/\(sectionId)#\(sectionId)\" id=\"settings-\(sectionId)\">" + ConsoleHTML.csrfField(user)
            : "<div id=\"settings-\(sectionId)\">"
        html += "<div class=\"row\">"
            + "<div>" + select("template_kind", "Message", AppSettingsUpdate.templateKinds, editor.kind) + "</div>"
            + "<div>" + select("template_part", "Part", AppSettingsUpdate.templateParts, editor.part) + "</div>"
            + "<div><label for=\"template_language\">Language</label><input id=\"template_language\" name=\"template_language\" "
            + "type=\"text\" placeholder=\"default\" value=\"\(ConsoleHTML.escape(editor.language))\""
            + (errors["template_language"] == nil ? "" : " class=\"invalid\" aria-invalid=\"true\"") + (editable ? "" : " readonly") + ">"
            + ConsoleHTML.fieldErrors(errors["template_language"] ?? []) + "</div></div>"
            + "<p class=\"hint\">Parts: subject, text and html of a mail (html: made from the text when not set); push_title and "
            + "push_body of an alert's push; an SMS (phone_code, phone_link, mfa_sms) has only text. Language: a BCP 47 tag "
            + "such as de; empty for the default language.</p>"
            + "<label for=\"template_text\">Text</label><textarea id=\"template_text\" name=\"template_text\" rows=\"8\""
            + (errors["template_text"] == nil ? "" : " class=\"invalid\" aria-invalid=\"true\"") + (editable ? "" : " readonly") + ">"
            + ConsoleHTML.escape(editor.text) + "</textarea>"
            + "<p class=\"hint\">Save an empty text to go back to the built-in one.</p>" + ConsoleHTML.fieldErrors(errors["template_text"] ?? [])
        if let target = AppSettingsUpdate.templateTarget(editor.key) {
            let builtIn = MessageTemplates(overrides: [:], defaultLanguage: nil)
                .part(String(target.part.split(separator: ".")[0]), kind: target.kind, language: LanguageTag.normalized(editor.language) ?? "en")
            if let builtIn {
                html += "<details><summary>The built-in text</summary><pre id=\"builtin-text\">\(ConsoleHTML.escape(builtIn))</pre></details>"
            }
        }
        html += editable
            ? "<div class=\"actions\"><button id=\"preview-template\" class=\"secondary\" type=\"submit\" name=\"intent\" value=\"preview\">Preview</button>"
                + "<button id=\"save-\(sectionId)\" type=\"submit\" name=\"intent\" value=\"save\">Save text</button></div></form>"
            : "</div>"
        return html + (editor.preview ?? "") + "</section>"
    }
}
