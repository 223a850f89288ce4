import Foundation

/// An app's auth hooks: HTTPS endpoints of its own backend that the service calls, signed per
/// the Standard Webhooks specification (`StandardWebhookSignature`), while it works on one of
/// the app's users. The token worker calls `before_sign_up` and `before_token`; the mailer
/// calls `send_email` and `send_sms` instead of sending the message itself.
public enum AuthHook {
    public enum Kind: String, CaseIterable, Sendable {
        case beforeSignUp = "before_sign_up"
        case beforeToken = "before_token"
        case sendEmail = "send_email"
        case sendSms = "send_sms"
    }

    /// What happens when the hook cannot be asked (timeout, connection refused, an address the
    /// outbound rules refuse), answers other than 2xx, or answers something not its schema.
    public enum FailurePolicy: String, CaseIterable, Sendable {
        /// The work stops: the sign-up or token is refused (503 `auth/hook-failed`), the
        /// message is not sent.
        case failClosed = "fail_closed"
        /// The work goes on as without the hook (our own mail or SMS is sent).
        case failOpen = "fail_open"
    }

    public static let defaultTimeoutMilliseconds = 2000
    /// A hook is asked while the client's request waits at the gateway (5 s,
    /// `IDENTITY_REQUEST_TIMEOUT_MS`): at most 3 s leaves the rest of the request 2 s, so a hook
    /// that answers at its timeout still makes its sign-in. A hook saved with more before this
    /// bound is asked with this bound.
    public static let timeoutRange = 100...3000
    /// An answer longer than this is a bad answer, not read further.
    public static let maximumAnswerBytes = 16 * 1024
    public static let maximumURLBytes = 2048
    /// A refusal's message, as the client is shown it.
    public static let maximumMessageBytes = 500
    /// `app_metadata` set by `before_sign_up`: the admin API's own limit.
    public static let maximumMetadataBytes = 8 * 1024

    /// What a hook may answer (HTTP 2xx, a JSON object, unknown fields refused):
    ///
    ///     before_sign_up: {"action": "allow", "app_metadata": {…}?} | {"action": "refuse", "message": "…"?}
    ///     before_token:   {"action": "allow", "claims": {…}?}       | {"action": "refuse", "message": "…"?}
    ///     send_email, send_sms: {} or {"action": "sent"}
    public enum Answer: Equatable, Sendable {
        case allow(appMetadata: JSONValue?, claims: [String: JSONValue])
        case refuse(message: String)
        case sent
    }

    /// The answer in `body`, or why it is not one (a bad answer follows the failure policy).
    public static func parseAnswer(_ body: Data, kind: Kind) -> Result<Answer, BadAnswer> {
        guard body.count <= maximumAnswerBytes else { return .failure(.init("answer larger than 16 KiB")) }
        guard case .object(let fields)? = JSONValue.parse(body, maximumBytes: maximumAnswerBytes, maximumDepth: 16) else {
            return .failure(.init("answer is not a JSON object"))
        }
        switch kind {
        case .sendEmail, .sendSms:
            if let unknown = fields.keys.sorted().first(where: { $0 != "action" }) {
                return .failure(.init("unknown field \(unknown)"))
            }
            guard fields["action"] == nil || fields["action"] == .string("sent") else {
                return .failure(.init("action must be \"sent\""))
            }
            return .success(.sent)
        case .beforeSignUp, .beforeToken:
            let extra = kind == .beforeSignUp ? "app_metadata" : "claims"
            if let unknown = fields.keys.sorted().first(where: { !["action", "message", extra].contains($0) }) {
                return .failure(.init("unknown field \(unknown)"))
            }
            switch fields["action"] {
            case .string("refuse")?:
                guard fields[extra] == nil else { return .failure(.init("a refusal has no \(extra)")) }
                var message = "The app refused this request."
                if let value = fields["message"] {
                    guard case .string(let text) = value, !text.isEmpty, text.utf8.count <= maximumMessageBytes else {
                        return .failure(.init("message must be a string of 1 to \(maximumMessageBytes) bytes"))
                    }
                    message = text
                }
                return .success(.refuse(message: message))
            case .string("allow")?:
                guard fields["message"] == nil else { return .failure(.init("message belongs to a refusal")) }
                if kind == .beforeSignUp {
                    guard let metadata = fields["app_metadata"] else { return .success(.allow(appMetadata: nil, claims: [:])) }
                    guard case .object = metadata, metadata.serialized.utf8.count <= maximumMetadataBytes else {
                        return .failure(.init("app_metadata must be a JSON object of at most 8 KiB"))
                    }
                    return .success(.allow(appMetadata: metadata, claims: [:]))
                }
                guard let claims = fields["claims"] else { return .success(.allow(appMetadata: nil, claims: [:])) }
                if let problem = CustomClaims.problem(claims) { return .failure(.init("claims \(problem)")) }
                guard case .object(let object) = claims else { return .failure(.init("claims must be a JSON object")) }
                return .success(.allow(appMetadata: nil, claims: object))
            default:
                return .failure(.init("action must be \"allow\" or \"refuse\""))
            }
        }
    }

    /// Why an answer was not taken, for the audit row.
    public struct BadAnswer: Error, Equatable, Sendable {
        public let reason: String
        public init(_ reason: String) { self.reason = reason }
    }

    /// The user's custom claims with the hook's on top, held to the custom claims' rules as a
    /// whole (the token carries both); nil when together they break them.
    public static func mergedClaims(_ own: [String: JSONValue], _ added: [String: JSONValue]) -> [String: JSONValue]? {
        let merged = own.merging(added) { $1 }
        return CustomClaims.problem(.object(merged)) == nil ? merged : nil
    }

    /// Why `text` cannot be a hook's URL from the text alone (the outbound rules, and no
    /// credentials or fragment); the DNS look is the saver's (`OutboundAddressPolicy.lookupProblem`).
    public static func urlProblem(_ text: String, policy: OutboundAddressPolicy) -> String? {
        guard text.utf8.count <= maximumURLBytes else { return "must be at most \(maximumURLBytes) bytes" }
        if let problem = policy.problem(url: text) { return problem }
        guard let url = URL(string: text), url.user == nil, url.password == nil, url.fragment == nil else {
            return "must be a URL without credentials or fragment"
        }
        return nil
    }
}
