import Foundation

/// Every metric the service exports, declared once (names, help, labels). Instrumentation
/// elsewhere is a one-line call on one of these. Label values come from closed lists (route
/// patterns, command types, error codes, limit names); `app` is "" (left out) unless
/// `IDENTITY_METRICS_PER_APP` is on.
public enum ServiceMetrics {
    static let registry = Metrics.shared

    // MARK: Gateway

    public static let httpRequests = registry.counter(
        "identity_http_requests_total", "HTTP requests answered, by route pattern, method and status class.",
        labels: ["route", "method", "status_class"])
    public static let httpDuration = registry.histogram(
        "identity_http_request_duration_seconds", "Time from a request's headers to its answer, by route pattern, method and status class.",
        labels: ["route", "method", "status_class"])
    public static let busRoundTrip = registry.histogram(
        "identity_bus_round_trip_seconds", "Command sent to reply received (or deadline), by queue and outcome.",
        labels: ["queue", "outcome"])
    public static let deadLettered = registry.counter(
        "identity_commands_dead_lettered_total",
        "Commands moved to their dead-letter queue after reaching the delivery limit, by consumer and type.",
        labels: ["consumer", "type"])
    public static let unavailable = registry.counter(
        "identity_unavailable_total", "503 auth/unavailable answers by cause (bus_timeout, bus_disconnected, store, draining).",
        labels: ["cause"])
    public static let rateLimitRefusals = registry.counter(
        "identity_rate_limit_refusals_total", "Requests refused by a rate limit, by limit name.",
        labels: ["limit", "app"])

    // MARK: Workers

    public static let commands = registry.counter(
        "identity_commands_total", "Commands handled, by worker, type and outcome (ok or the error code).",
        labels: ["worker", "type", "outcome"])
    public static let commandDuration = registry.histogram(
        "identity_command_duration_seconds", "Time to handle a command (reply published), by worker and type.",
        labels: ["worker", "type"])
    public static let redeliveries = registry.counter(
        "identity_command_redeliveries_total", "Commands the broker delivered again (a worker died or handed them back).",
        labels: ["worker", "type"])
    public static let inFlight = registry.gauge(
        "identity_commands_in_flight", "Commands being handled now.", labels: ["worker"])

    // MARK: Authentication

    public static let signIns = registry.counter(
        "identity_sign_ins_total",
        "Sign-in attempts by method (password, guest, email_code, phone, provider, passkey; mfa for the second step) and outcome (success, mfa_challenge, invalid_credential, disabled, rate_limited, error).",
        labels: ["method", "outcome", "app"])
    public static let signUps = registry.counter(
        "identity_sign_ups_total", "Sign-ups by outcome (success or the error code).", labels: ["outcome", "app"])
    public static let refreshes = registry.counter(
        "identity_token_refreshes_total", "Refresh-token rotations by outcome (success or the error code).",
        labels: ["outcome", "app"])
    public static let reuseDetections = registry.counter(
        "identity_refresh_token_reuse_detected_total", "Spent refresh tokens presented again (the session is ended).",
        labels: ["app"])

    // MARK: Outbox

    public static let outboxBacklog = registry.gauge(
        "identity_outbox_backlog", "Outbox rows waiting to be relayed (read at scrape time).")
    public static let outboxOldestAge = registry.gauge(
        "identity_outbox_oldest_age_seconds", "Age of the oldest row waiting in the outbox (read at scrape time).")
    public static let outboxRelayed = registry.counter(
        "identity_outbox_relayed_total", "Outbox rows published and confirmed by the broker.")
    public static let outboxRelayLag = registry.histogram(
        "identity_outbox_relay_lag_seconds", "Commit of an outbox row to its confirmed publication.",
        buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300])

    // MARK: Delivery

    public static let deliveries = registry.counter(
        "identity_deliveries_total", "Messages to users by channel (email, sms, push) and outcome (sent, sent_by_app: handed to the app's send_email or send_sms hook, retried, dead_lettered, duplicate, undeliverable: an address Apple says does not forward).",
        labels: ["channel", "outcome"])

    public static let smsSegments = registry.counter(
        "identity_sms_segments_total", "SMS segments sent, by encoding (gsm7: 160 characters in one, 153 a part; ucs2: 70 in one, 67 a part), which is what an SMS bill counts.",
        labels: ["encoding"])

    public static let smsRefusals = registry.counter(
        "identity_sms_refusals_total", "Phone codes not sent by the SMS-pumping policy, by reason (calling_code, the cap's name, breaker).",
        labels: ["reason", "app"])
    /// One per opening, by lane (anonymous: phone sign-in; authenticated: linking and the SMS
    /// second factor): a lane's texts then stop for an hour, which someone should look at.
    public static let smsBreakerTrips = registry.counter(
        "identity_sms_breaker_trips_total", "SMS breakers opened (a lane's texts stop for an hour), by lane (anonymous, authenticated).",
        labels: ["lane", "app"])

    // MARK: Process

    public static let startTime = registry.gauge(
        "identity_process_start_time_seconds", "When this process started (Unix time).", labels: ["program"])

    /// Declares every family at start-up (Swift initializes these lazily), so a scrape lists
    /// them all, with HELP and TYPE, before the first event of each kind.
    public static func registerAll() {
        _ = [httpRequests.family, rateLimitRefusals.family, unavailable.family, commands.family, redeliveries.family,
             signIns.family, signUps.family, refreshes.family, reuseDetections.family, outboxRelayed.family,
             deliveries.family, httpDuration.family, busRoundTrip.family, commandDuration.family,
             outboxRelayLag.family, inFlight.family, outboxBacklog.family, outboxOldestAge.family, startTime.family,
             smsBreakerTrips.family]
    }

    /// The type label of a command: its proto name, or "other" for anything that is not one of
    /// ours (a message type is the sender's word, and labels must stay a short list).
    public static func commandType(_ type: String) -> String {
        type.hasPrefix("identity.") && type.utf8.count <= 80
            && type.utf8.allSatisfy({ $0 == 0x2E || $0 == 0x5F || (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) })
            ? type : "other"
    }

    /// The status class label of an HTTP status: 2xx, 3xx, 4xx or 5xx.
    public static func statusClass(_ status: Int) -> String { "\(status / 100)xx" }

    /// The outcome label of a reply: "ok", or the error code of an `identity.common.v1.Error`.
    public static func outcome(replyType: String, body: Data) -> String {
        guard replyType == "identity.common.v1.Error" else { return "ok" }
        guard let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any],
              let code = object["code"] as? String, code.hasPrefix("auth/"), code.count < 64 else { return "error" }
        return code
    }
}
