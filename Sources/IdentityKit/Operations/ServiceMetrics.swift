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
    public static let hookCallsSkipped = registry.counter(
        "identity_auth_hook_calls_skipped_total",
        "Auth hook calls not made (the app's breaker open, or its calls or the worker's at their bound), by kind; "
            + "the hook's failure policy applied at once.",
        labels: ["kind"])
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

    // MARK: Process (every process)

    public static let startTime = registry.gauge(
        "identity_process_start_time_seconds", "When this process started (Unix time).", labels: ["program"])
    public static let buildInfo = registry.gauge(
        "identity_build_info", "Always 1: the version this process was built from, and which program it is.",
        labels: ["version", "program"])
    // The process collector's families (`ProcessMetrics`, read from /proc/self at scrape time),
    // named as every Prometheus client library names them, so standard dashboards find them.
    static let processCPU = registry.counter(
        "process_cpu_seconds_total", "Total user and system CPU time spent in seconds.")
    static let processResident = registry.gauge(
        "process_resident_memory_bytes", "Resident memory size in bytes.")
    static let processVirtual = registry.gauge(
        "process_virtual_memory_bytes", "Virtual memory size in bytes.")
    static let processOpenFDs = registry.gauge(
        "process_open_fds", "Number of open file descriptors.")
    static let processMaxFDs = registry.gauge(
        "process_max_fds", "Maximum number of open file descriptors (the soft limit).")
    static let processStartTime = registry.gauge(
        "process_start_time_seconds", "Start time of the process since unix epoch in seconds.")
    static let dbPoolInUse = registry.gauge(
        "identity_db_pool_connections_in_use", "Database connections lent out now (read at scrape time).")
    static let dbPoolIdle = registry.gauge(
        "identity_db_pool_connections_idle", "Open database connections waiting in the pool (read at scrape time).")
    static let dbPoolSize = registry.gauge(
        "identity_db_pool_connections_max", "The most database connections the pool opens (IDENTITY_DB_POOL_SIZE).")
    static let dbPoolNestedAcquires = registry.counter(
        "identity_db_pool_nested_acquires_total",
        "Times a thread holding a database connection asked the same pool for another (a deadlock under load: should stay 0).")
    public static let brokerConnected = registry.gauge(
        "identity_broker_connected", "1 while a broker link is connected, 0 while it reconnects, by link.",
        labels: ["link"])

    // MARK: Gateway session reads

    public static let sessionCache = registry.counter(
        "identity_session_cache_total", "GET /v1/me and introspection reads of a session: hit (from memory), miss (read from "
            + "the store, then held) or bypass (read from the store while store changes are not heard).",
        labels: ["outcome"])
    public static let sessionListenerConnected = registry.gauge(
        "identity_session_listener_connected", "1 while the gateway hears the store's session changes (sessions are "
            + "then served from memory), 0 while it reads the store for each.")

    // MARK: Gateway connections

    public static let httpOpenConnections = registry.gauge(
        "identity_http_open_connections", "HTTP connections open now on the public port (read at scrape time).")
    public static let httpMaxConnections = registry.gauge(
        "identity_http_max_connections", "The most HTTP connections the gateway accepts (IDENTITY_HTTP_MAX_CONNECTIONS, "
            + "lowered to what the open-files limit allows).")

    /// Which process a registry belongs to: each exports its own families only.
    public enum Exports: Sendable {
        case gateway, tokenWorker, providerWorker, mailerWorker, revocationWorker, webhookWorker
    }

    /// Declares the families `process` exports at start-up (Swift initializes these lazily),
    /// so a scrape lists them, with HELP and TYPE, before the first event of each kind; and
    /// sets what is known once (start time, build). A family another process owns is never
    /// declared here; one a shared code path touches later appears when it happens.
    public static func register(for process: Exports, program: String) {
        startTime.set(Date().timeIntervalSince1970, program)
        buildInfo.set(1, BuildInfo.version, program)
        ProcessMetrics.register(registry)
        // Touching a family declares it: only the chosen process's are touched (a function, not
        // a list built for every process).
        func worker() -> [MetricFamily] {
            [commands.family, commandDuration.family, redeliveries.family, inFlight.family, deadLettered.family]
        }
        let families: [MetricFamily]
        switch process {
        case .gateway:
            families = [httpRequests.family, httpDuration.family, httpOpenConnections.family, httpMaxConnections.family,
                        busRoundTrip.family, unavailable.family, rateLimitRefusals.family,
                        sessionCache.family, sessionListenerConnected.family]
        case .tokenWorker:
            families = worker() + [signIns.family, signUps.family, refreshes.family, reuseDetections.family,
                                 rateLimitRefusals.family, smsRefusals.family, smsBreakerTrips.family]
        case .providerWorker:
            families = worker()
        case .mailerWorker:
            families = worker() + [deliveries.family, smsSegments.family]
        case .revocationWorker:
            families = worker() + [outboxRelayed.family, outboxRelayLag.family, outboxBacklog.family, outboxOldestAge.family]
        case .webhookWorker:
            families = []  // its families are its own module's (IdentityWebhookWorker's WebhookMetrics)
        }
        _ = families
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
