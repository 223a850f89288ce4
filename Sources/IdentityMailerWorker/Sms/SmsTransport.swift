import Foundation
import IdentityKit
import IdentityOutbound

/// Where a rendered SMS goes: a Twilio-compatible Messaging API, or a file (development).
protocol SmsTransport: Sendable {
    func deliver(to: String, body: String, messageId: String) throws(ChannelQueues.Failure)
}

/// A Twilio-compatible account: `POST {api}/2010-04-01/Accounts/{sid}/Messages.json`, Basic
/// auth with the account sid and auth token, a form body `To`, `From` or
/// `MessagingServiceSid`, `Body`. 201 (or 200) is accepted; 429 and 5xx are retried; any other
/// 4xx is the API refusing this message for good (a bad number, a bad account): dead-lettered.
struct TwilioTransport: SmsTransport {
    struct Account: Sendable {
        var apiURL: String
        var accountSid: String
        var authToken: String
        var from: String?
        var messagingServiceSid: String?
    }

    let account: Account
    let http: OutboundHTTP
    /// Set when the app chose the URL (`sms_api_url`): held to it at connect, whatever was
    /// checked when it was saved. nil for the worker's own `IDENTITY_SMS_API_URL`.
    var policy: OutboundAddressPolicy?

    func deliver(to: String, body: String, messageId: String) throws(ChannelQueues.Failure) {
        var fields = [("To", to)]
        if let service = account.messagingServiceSid, !service.isEmpty {
            fields.append(("MessagingServiceSid", service))
        } else if let from = account.from, !from.isEmpty {
            fields.append(("From", from))
        } else {
            throw .permanent("the SMS account has neither a From number nor a MessagingServiceSid")
        }
        fields.append(("Body", body))
        let response: OutboundHTTP.Response
        do {
            if let policy {
                response = try http.postForm(url(withCredentials: true), fields: fields, policy: policy)
            } else {
                response = try http.postForm(url(withCredentials: true), fields: fields)
            }
        } catch let failure as OutboundHTTP.Failure where failure.refusal != nil {
            // Sending again reaches the same address (or none): a dead letter at once, which
            // `identityctl mail replay-dead` sends again once the app's URL is fixed.
            throw .permanent("the app's SMS API URL is refused: \(failure.refusal ?? "")")
        } catch {
            // The failure names the URL, which holds the credentials: say only where.
            throw .transient("cannot reach \(url(withCredentials: false))")
        }
        switch response.status {
        case 200, 201: return
        case 429, 500...599: throw .transient("HTTP \(response.status)")
        // Only the status: the API's message may quote the number, which the logs never hold.
        default: throw .permanent("HTTP \(response.status)")
        }
    }

    /// Basic auth through the URL's user info (libcurl sends it as `Authorization: Basic`),
    /// each part percent-encoded.
    private func url(withCredentials: Bool) -> String {
        var base = account.apiURL
        while base.hasSuffix("/") { base.removeLast() }
        let path = "/2010-04-01/Accounts/" + Self.encode(account.accountSid) + "/Messages.json"
        guard withCredentials, let schemeEnd = base.range(of: "://") else { return base + path }
        let userInfo = Self.encode(account.accountSid) + ":" + Self.encode(account.authToken) + "@"
        return String(base[..<schemeEnd.upperBound]) + userInfo + String(base[schemeEnd.upperBound...]) + path
    }

    private static func encode(_ value: String) -> String {
        value.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~"))) ?? ""
    }
}

/// Writes each SMS to `<directory>/<message id>.sms` (beside the mail's `.eml` files): `To:`,
/// a blank line, then the text.
struct SmsFileTransport: SmsTransport {
    let directory: String

    func deliver(to: String, body: String, messageId: String) throws(ChannelQueues.Failure) {
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let safeName = messageId.filter { $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" }
            try Data("To: \(to)\n\n\(body)\n".utf8)
                .write(to: URL(fileURLWithPath: directory).appendingPathComponent(safeName + ".sms"))
        } catch {
            throw .transient("cannot write \(directory): \(error)")
        }
    }
}
