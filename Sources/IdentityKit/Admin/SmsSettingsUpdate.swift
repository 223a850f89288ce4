import Foundation

/// The SMS part of an `AppSettingsUpdate` (API names `sms_*`; identityctl flags `--sms-*`):
/// allowed calling codes, the breaker's hourly threshold, and the app's own Twilio-compatible
/// account, whose auth token is sealed (`SmsCredentialSeal`) and never shown back. nil leaves a
/// setting as it is; an empty string clears a text setting, an empty list the allowed codes.
/// The caps are rate limits (`sms_send_per_number`, …: `rate_limits`).
public struct SmsSettingsUpdate: Sendable {
    public var allowedCallingCodes: [Int]?
    public var breakerHourly: Int?
    public var apiURL: String?
    public var accountSid: String?
    public var authToken: String?
    public var fromNumber: String?
    public var messagingServiceSid: String?

    public init() {}

    package var isEmpty: Bool {
        allowedCallingCodes == nil && breakerHourly == nil && apiURL == nil && accountSid == nil && authToken == nil
            && fromNumber == nil && messagingServiceSid == nil
    }

    /// identityctl's list: `33,44,1` (a leading `+` allowed).
    public static func parseCodes(_ text: String) -> [Int]? {
        var codes: [Int] = []
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            var item = part.trimmingCharacters(in: .whitespaces)
            if item.hasPrefix("+") { item.removeFirst() }
            guard !item.isEmpty, item.count <= 3, item.allSatisfy(\.isASCIIDigit), let code = Int(item) else { return nil }
            codes.append(code)
        }
        return codes
    }

    func problems() -> [(setting: String, message: String)] {
        var found: [(String, String)] = []
        if let codes = allowedCallingCodes,
           codes.count > 300 || codes.contains(where: { PhoneNumber.mainRegions[$0] == nil }) {
            found.append(("sms_allowed_calling_codes", "must be calling codes in use (33, 44, 1…), at most 300"))
        }
        if let hourly = breakerHourly, !(1...10_000_000).contains(hourly) {
            found.append(("sms_breaker_hourly", "must be 1 to 10000000 sends an hour"))
        }
        if let url = apiURL, !url.isEmpty {
            let parsed = URL(string: url)
            if url.utf8.count > 2048 || !["http", "https"].contains(parsed?.scheme ?? "") || parsed?.host?.isEmpty != false
                || parsed?.user != nil {
                found.append(("sms_api_url", "must be an http(s) URL without credentials (https://api.twilio.com)"))
            }
        }
        for (name, text) in [("sms_account_sid", accountSid), ("sms_auth_token", authToken),
                             ("sms_messaging_service_sid", messagingServiceSid)] {
            if let text, text.utf8.count > 256 { found.append((name, "must be at most 256 characters")) }
        }
        if let from = fromNumber, !from.isEmpty, PhoneNumber.normalize(from) == nil,
           from.utf8.count > 32 || from.contains(where: { !$0.isLetter && !$0.isNumber }) {
            found.append(("sms_from", "must be an E.164 number or an alphanumeric sender id"))
        }
        return found
    }

    /// The `sms_*` fields of an admin API body.
    /// `field(name)`: the body's value of `name` (the caller counts which names were read).
    static func parse(_ field: (String) -> JSONValue?, problems: inout [ServiceError.FieldProblem],
                      text: (String) -> String?) -> SmsSettingsUpdate {
        var update = SmsSettingsUpdate()
        if let value = field("sms_allowed_calling_codes"), value != .null {
            var codes: [Int] = []
            if case .array(let items) = value {
                for item in items {
                    if case .number(let number) = item, number.rounded() == number, (1...999).contains(number) {
                        codes.append(Int(number))
                    } else if case .string(let string) = item, let parsed = parseCodes(string), parsed.count == 1 {
                        codes.append(parsed[0])
                    } else {
                        problems.append(.init(location: "body.sms_allowed_calling_codes", message: "must be a list of calling codes"))
                        break
                    }
                }
                update.allowedCallingCodes = codes
            } else {
                problems.append(.init(location: "body.sms_allowed_calling_codes", message: "must be a list of calling codes"))
            }
        } else if field("sms_allowed_calling_codes") == .null {
            update.allowedCallingCodes = []
        }
        if let value = field("sms_breaker_hourly"), value != .null {
            if case .number(let number) = value, number.rounded() == number, abs(number) < 1e12 {
                update.breakerHourly = Int(number)
            } else {
                problems.append(.init(location: "body.sms_breaker_hourly", message: "must be an integer"))
            }
        }
        update.apiURL = text("sms_api_url")
        update.accountSid = text("sms_account_sid")
        update.authToken = text("sms_auth_token")
        update.fromNumber = text("sms_from")
        update.messagingServiceSid = text("sms_messaging_service_sid")
        return update
    }
}
