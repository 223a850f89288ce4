import IdentityKit

/// The webhook worker's metrics.
enum WebhookMetrics {
    /// Attempts by outcome: delivered (2xx), failed (another status, a timeout, no connection),
    /// refused (the URL led to an address apps may not reach), dead_lettered (a delivery given up).
    static let deliveries = Metrics.shared.counter(
        "identity_webhook_deliveries_total", "Webhook delivery attempts by outcome", labels: ["outcome"])
    static let latency = Metrics.shared.histogram(
        "identity_webhook_delivery_duration_seconds", "Time from connect to the endpoint's answer")
    static let backlog = Metrics.shared.gauge(
        "identity_webhook_backlog", "Deliveries waiting (pending, due or not)")
    static let refusedEvents = Metrics.shared.counter(
        "identity_webhook_events_refused_total", "Events on the webhook queue not published by the outbox relay, dropped")
    static let oldest = Metrics.shared.gauge(
        "identity_webhook_backlog_oldest_seconds", "Age of the oldest pending delivery")

    /// Declares the families at start-up, so a scrape lists them before the first delivery.
    static func declare() {
        _ = (deliveries, latency, backlog, oldest, refusedEvents)  // a metric is declared when first touched
    }

    static func reportBacklog(pool: PGPool) {
        Metrics.shared.onCollect {
            guard let row = try? pool.withConnection({ try $0.query("""
                SELECT count(*)::bigint AS backlog,
                       coalesce(extract(epoch FROM now() - min(created_at)), 0)::float8 AS oldest
                FROM webhook_deliveries WHERE state = 'pending'
                """).first }) else { return }
            backlog.set(Double((try? row.int("backlog")) ?? 0))
            oldest.set((try? row.double("oldest")) ?? 0)
        }
    }
}
