import Foundation
import IdentityKit

/// One setting on the console's Settings page: its admin API name (the key of `PATCH
/// /v1/admin/settings`), how its form shows and sends it, and a hint in the reader's words.
struct ConsoleSettingField: Sendable {
    enum Kind: Sendable {
        /// One value a line: a list of strings.
        case lines
        case text
        /// A whole number (`unit` says of what); the API's 0 (nothing set) is shown empty.
        case integer(unit: String)
        /// A checkbox: true or false.
        case flag
        /// One of the listed values: (value, label).
        case choice([(value: String, label: String)])
        /// Calling codes separated by commas or spaces.
        case codes
        /// A JSON object, typed as text.
        case json
        /// Write-only: sent only when given (which needs a fresh sign-in); the page shows only
        /// whether one is set (`stateKey` of the settings) and never the value. `accept`: the
        /// file picker's types, which console.js reads into the field.
        case secret(stateKey: String, accept: String)
        /// A limit of `RateLimitCatalogue`: `COUNT/WINDOW`, `default` or `off`, inside `rate_limits`.
        case rateLimit(RateLimitPolicy)
    }

    let name: String
    let label: String
    let hint: String
    let kind: Kind

    /// The form's name (and the element's id): the setting's, or `rate_limit_<limit>`.
    var formName: String {
        if case .rateLimit(let policy) = kind { return "rate_limit_" + policy.name }
        return name
    }

    /// The hidden field holding the value the page showed: a setting is sent only when changed,
    /// so a save neither rewrites untouched settings (a limit stays `default`) nor undoes
    /// someone else's change to another field since the page was read.
    var shownName: String { formName + "__shown" }

    var isSecret: Bool { if case .secret = kind { true } else { false } }

    /// The API body's value for `raw`, the form's text (nil: leave the setting as it is). What
    /// is not a number is sent as typed, so the API's own rule answers it.
    func value(_ raw: String) -> JSONValue? {
        let trimmed = TextScanning.trimmed(Substring(raw))
        switch kind {
        case .lines:
            return .array(raw.split(whereSeparator: \.isNewline).map { TextScanning.trimmed($0) }
                .filter { !$0.isEmpty }.map(JSONValue.string))
        case .text, .choice, .rateLimit:
            return .string(trimmed)
        case .integer:
            return Int(trimmed).map { JSONValue($0) } ?? .string(trimmed)
        case .flag:
            return .bool(raw == "true")
        case .codes:
            return .array(trimmed.split(whereSeparator: { $0 == "," || $0.isWhitespace }).map { .string(String($0)) })
        case .json:
            return trimmed.isEmpty ? .object([:]) : JSONValue.parse(Data(trimmed.utf8)) ?? .string(trimmed)
        case .secret:
            return trimmed.isEmpty ? nil : .string(raw)
        }
    }

    /// The field's value when the form changed it (a secret: when one was given). A field the
    /// form never had (neither it nor its shown value) is left alone; an unticked checkbox is
    /// absent but its shown value is not.
    func changedValue(in form: [String: String]) -> JSONValue? {
        guard form[formName] != nil || form[shownName] != nil else { return nil }
        let raw = form[formName] ?? ""
        guard let value = value(raw) else { return nil }
        if isSecret { return value }
        if let shown = form[shownName], self.value(shown) == value { return nil }
        return value
    }

    /// The setting as the page shows it, from the settings the API answered.
    func current(_ settings: JSONValue) -> String {
        let stored: JSONValue?
        if case .rateLimit(let policy) = kind { stored = settings["rate_limits"]?[policy.name] } else { stored = settings[name] }
        switch stored {
        case .array(let items)?:
            let texts = items.map { item -> String in
                if case .string(let text) = item { return text }
                if case .number(let number) = item { return String(Int(number)) }
                return item.serialized
            }
            if case .codes = kind { return texts.joined(separator: ", ") }
            return texts.joined(separator: "\n")
        case .string(let text)?: return text
        case .number(let number)?: return number == 0 ? "" : String(Int(number))
        case .bool(let flag)?: return flag ? "true" : "false"
        case .object(let fields)?: return fields.isEmpty ? "" : stored?.serialized ?? ""
        default: return ""
        }
    }

    /// The field's label, control, hint and errors. `typed`: what the form held when it was
    /// refused (never a secret's); read-only without `editable`.
    func html(settings: JSONValue, typed: [String: String]?, errors: [String], editable: Bool) -> String {
        let current = current(settings)
        var shown = typed?[formName] ?? current
        if case .flag = kind, let typed { shown = typed[formName] == "true" ? "true" : "false" }
        let value = ConsoleHTML.escape(shown)
        let id = ConsoleHTML.escape(formName)
        let invalid = errors.isEmpty ? "" : " class=\"invalid\" aria-invalid=\"true\""
        let locked = editable ? "" : " readonly"
        let remembered = editable && !isSecret
            ? "<input type=\"hidden\" name=\"\(ConsoleHTML.escape(shownName))\" value=\"\(ConsoleHTML.escape(current))\">" : ""
        var html = ""
        var hint = hint
        switch kind {
        case .lines:
            html = labelTag() + "<textarea id=\"\(id)\" name=\"\(id)\" rows=\"3\"\(invalid)\(locked)>\(value)</textarea>"
        case .text, .codes:
            html = labelTag() + "<input id=\"\(id)\" name=\"\(id)\" type=\"text\" value=\"\(value)\"\(invalid)\(locked)>"
        case .integer(let unit):
            html = labelTag() + "<input id=\"\(id)\" name=\"\(id)\" type=\"text\" inputmode=\"numeric\" value=\"\(value)\""
                + " placeholder=\"\(ConsoleHTML.escape(unit))\"\(invalid)\(locked)>"
        case .json:
            html = labelTag() + "<textarea id=\"\(id)\" name=\"\(id)\" rows=\"4\"\(invalid)\(locked)>\(value)</textarea>"
        case .flag:
            html = "<label class=\"check\"><input id=\"\(id)\" name=\"\(id)\" type=\"checkbox\" value=\"true\""
                + (shown == "true" ? " checked" : "") + (editable ? "" : " disabled") + invalid + "> "
                + ConsoleHTML.escape(label) + "</label>"
        case .choice(let options):
            html = labelTag() + "<select id=\"\(id)\" name=\"\(id)\"\(invalid)\(editable ? "" : " disabled")>"
                + options.map { option in
                    "<option value=\"\(ConsoleHTML.escape(option.value))\"\(option.value == shown ? " selected" : "")>"
                        + ConsoleHTML.escape(option.label) + "</option>"
                }.joined() + "</select>"
        case .secret(let stateKey, let accept):
            let set = settings[stateKey] == .bool(true)
            html = labelTag() + "<p><span class=\"badge \(set ? "set" : "off")\" id=\"\(id)_state\">\(set ? "set" : "not set")</span></p>"
            if editable {
                html += "<input id=\"\(id)_file\" type=\"file\" accept=\"\(ConsoleHTML.escape(accept))\" data-into=\"\(id)\">"
                    + "<textarea id=\"\(id)\" name=\"\(id)\" rows=\"4\" autocomplete=\"off\"\(invalid)></textarea>"
            }
        case .rateLimit(let policy):
            hint = "Default \(policy.count)/\(Int(policy.window))s. " + hint
            html = "<label for=\"\(id)\"><code>\(ConsoleHTML.escape(policy.name))</code></label>"
                + "<input id=\"\(id)\" name=\"\(id)\" type=\"text\" value=\"\(value)\"\(invalid)\(locked)>"
        }
        return "<div class=\"field\">" + html + remembered + "<p class=\"hint\">\(ConsoleHTML.escape(hint))</p>"
            + ConsoleHTML.fieldErrors(errors) + "</div>"
    }

    private func labelTag() -> String {
        "<label for=\"\(ConsoleHTML.escape(formName))\">\(ConsoleHTML.escape(label))</label>"
    }
}

/// A section of the Settings page: its own form (`POST …/settings/<id>`), so saving it sends
/// only its settings.
struct ConsoleSettingsSection: Sendable {
    let id: String
    let title: String
    /// What the section is for, in a sentence or two.
    let intro: String
    let fields: [ConsoleSettingField]
    /// Facts the API derives, shown under the fields (a pending domain's proof, the FCM project).
    var facts: @Sendable (JSONValue) -> [String] = { _ in [] }

    /// The admin API body of what the form changed.
    func body(_ form: [String: String]) -> [String: JSONValue] {
        var body: [String: JSONValue] = [:]
        var limits: [String: JSONValue] = [:]
        for field in fields {
            guard let value = field.changedValue(in: form) else { continue }
            if case .rateLimit(let policy) = field.kind { limits[policy.name] = value } else { body[field.name] = value }
        }
        if !limits.isEmpty { body["rate_limits"] = .object(limits) }
        return body
    }

    /// A problem's field: the setting's own, or for `rate_limits` the limit its message names
    /// (the API reports them all under `rate_limits`); nil when no field of this section has it.
    func formName(setting: String, message: String) -> String? {
        if setting == "rate_limits" {
            return fields.first { field in
                guard case .rateLimit(let policy) = field.kind else { return false }
                return message.hasPrefix(policy.name + " ") || message.hasPrefix(policy.name + "=")
                    || message.hasPrefix("no limit named " + policy.name + " ")
            }?.formName
        }
        return fields.first { $0.name == setting }?.formName
    }

    /// Messages by form name; those of no field here under "" (shown atop the section).
    func place(_ problems: [(setting: String, message: String)]) -> [String: [String]] {
        var placed: [String: [String]] = [:]
        for problem in problems {
            placed[formName(setting: problem.setting, message: problem.message) ?? "", default: []].append(problem.message)
        }
        return placed
    }
}
