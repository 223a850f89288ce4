import Foundation
import IdentityCredentials
import IdentityKit
import IdentityOutbound

/// Delivers pending webhook deliveries: a poller claims what is due (a lease, so several workers
/// share the table and a dead worker's claims come back), each delivery runs on its own thread
/// with a short timeout. Slots are shared out so one app cannot starve the others:
/// `concurrency` in all, at most `appConcurrency` per app (claimed round-robin over the apps
/// with work due), `endpointConcurrency` per endpoint, and a single probe for an endpoint whose
/// last attempt failed — a dead endpoint holds one slot for one timeout at a time.
/// A user's deliveries to one endpoint go in order: one waits while an older one of the same
/// endpoint and user is pending.
final class DeliveryLoop: Sendable {
    struct Settings: Sendable {
        var concurrency: Int
        var appConcurrency: Int
        var endpointConcurrency: Int
        var retrySchedule: [Double]
        var pollSeconds: Double
        var policy: OutboundAddressPolicy
    }

    private struct Claimed: Sendable {
        let id: String
        let endpointId: String
        let appId: String
        let eventId: String
        let payload: String
        let attempts: Int
    }

    /// Slots in use, and which endpoints failed their last attempt (this worker's view).
    struct Slots {
        var endpoint: [String: Int] = [:]
        var app: [String: Int] = [:]
        var total = 0
        var failing: Set<String> = []
        var stopping = false

        func endpointLimit(_ id: String, _ settings: Settings) -> Int {
            failing.contains(id) ? 1 : settings.endpointConcurrency
        }

        /// Takes a slot for a delivery to `endpoint` of `app`, if every limit allows it.
        mutating func take(endpoint id: String, app: String, _ settings: Settings) -> Bool {
            guard total < settings.concurrency, self.app[app, default: 0] < settings.appConcurrency,
                  endpoint[id, default: 0] < endpointLimit(id, settings) else { return false }
            endpoint[id, default: 0] += 1
            self.app[app, default: 0] += 1
            total += 1
            return true
        }

        mutating func give(endpoint id: String, app: String, succeeded: Bool) {
            endpoint[id, default: 1] -= 1
            if endpoint[id] == 0 { endpoint[id] = nil }
            self.app[app, default: 1] -= 1
            if self.app[app] == 0 { self.app[app] = nil }
            total -= 1
            if succeeded { failing.remove(id) } else { failing.insert(id) }
        }

        /// Endpoints and apps with no slot left: the claim skips their deliveries.
        func full(_ settings: Settings) -> (endpoints: [String], apps: [String]) {
            (endpoint.filter { $0.value >= endpointLimit($0.key, settings) }.map(\.key),
             app.filter { $0.value >= settings.appConcurrency }.map(\.key))
        }
    }

    private let pool: PGPool
    private let http: OutboundHTTP
    private let seal: WebhookSecretSeal
    private let settings: Settings
    private let state = Locked(Slots())
    private let wake = DispatchSemaphore(value: 0)
    private let pollerDone = DispatchSemaphore(value: 0)
    private let deliveries = DispatchGroup()
    private let work = DispatchQueue(label: "webhook-deliveries", attributes: .concurrent)
    /// Longer than a delivery can take: a claim outlives its attempt, never the other way.
    private static let leaseSeconds = 60

    init(pool: PGPool, http: OutboundHTTP, seal: WebhookSecretSeal, settings: Settings) {
        self.pool = pool
        self.http = http
        self.seal = seal
        self.settings = settings
    }

    func start() {
        Thread { [self] in poll() }.start()
    }

    /// Stops claiming, lets the deliveries in flight finish (each within its timeout).
    func stop(timeout: Double) {
        state.withLock { $0.stopping = true }
        wake.signal()
        _ = pollerDone.wait(timeout: .now() + timeout)
        _ = deliveries.wait(timeout: .now() + timeout)
    }

    private func poll() {
        defer { pollerDone.signal() }
        while true {
            let (stopping, free, full) = state.withLock { state in
                (state.stopping, settings.concurrency - state.total, state.full(settings))
            }
            if stopping { return }
            var startedAny = false
            if free > 0 {
                do {
                    let claimed = try claim(limit: free, skippingEndpoints: full.endpoints, skippingApps: full.apps)
                    var released: [String] = []
                    for delivery in claimed {
                        let started = state.withLock { $0.take(endpoint: delivery.endpointId, app: delivery.appId, settings) }
                        guard started else { released.append(delivery.id); continue }
                        startedAny = true
                        deliveries.enter()
                        work.async { [self] in
                            var succeeded = false
                            defer {
                                state.withLock { $0.give(endpoint: delivery.endpointId, app: delivery.appId, succeeded: succeeded) }
                                deliveries.leave()
                                wake.signal()
                            }
                            succeeded = deliver(delivery)
                        }
                    }
                    if !released.isEmpty { try release(released) }
                } catch {
                    Log.warning("webhook deliveries: store unavailable", ["error": "\(error)"])
                }
            }
            // Straight on while deliveries start; otherwise until one ends or the next poll.
            if !startedAny { _ = wake.wait(timeout: .now() + settings.pollSeconds) }
        }
    }

    /// Claims due deliveries, round-robin over the apps: each app's oldest first, at most its
    /// share of slots per app and endpoint, so a backlog of one app is not all that is claimed.
    private func claim(limit: Int, skippingEndpoints busyEndpoints: [String], skippingApps busyApps: [String]) throws -> [Claimed] {
        try pool.withConnection { connection in
            try connection.query("""
                WITH candidates AS (
                    SELECT d.id,
                           row_number() OVER (PARTITION BY d.app_id ORDER BY d.id) AS app_rank,
                           row_number() OVER (PARTITION BY d.endpoint_id ORDER BY d.id) AS endpoint_rank
                    FROM webhook_deliveries d
                    JOIN webhook_endpoints e ON e.id = d.endpoint_id AND e.enabled
                    WHERE d.state = 'pending' AND d.next_attempt_at <= now()
                      AND (d.locked_until IS NULL OR d.locked_until < now())
                      AND NOT (d.endpoint_id = ANY ($2::text[])) AND NOT (d.app_id = ANY ($3::text[]))
                      AND NOT EXISTS (SELECT 1 FROM webhook_deliveries o
                                      WHERE o.endpoint_id = d.endpoint_id AND o.ordering_key = d.ordering_key
                                        AND o.state = 'pending' AND o.id < d.id)
                ),
                due AS (
                    SELECT d.id FROM webhook_deliveries d JOIN candidates c ON c.id = d.id
                    WHERE c.app_rank <= $5 AND c.endpoint_rank <= $6
                      AND d.state = 'pending' AND (d.locked_until IS NULL OR d.locked_until < now())
                    ORDER BY c.app_rank, d.id LIMIT $1
                    FOR UPDATE OF d SKIP LOCKED
                )
                UPDATE webhook_deliveries w SET locked_until = now() + make_interval(secs => $4::int)
                FROM due WHERE w.id = due.id
                RETURNING w.id, w.endpoint_id, w.app_id, w.event_id, w.payload, w.attempts
                """, [String(limit), PGParam.textArray(busyEndpoints), PGParam.textArray(busyApps), String(Self.leaseSeconds),
                      String(settings.appConcurrency), String(settings.endpointConcurrency)]).map { row in
                Claimed(id: try row.string("id"), endpointId: try row.string("endpoint_id"), appId: try row.string("app_id"),
                        eventId: try row.string("event_id"), payload: try row.string("payload"), attempts: try row.int("attempts"))
            }.sorted { (Int64($0.id) ?? 0) < (Int64($1.id) ?? 0) }
        }
    }

    private func release(_ ids: [String]) throws {
        _ = try pool.withConnection { connection in
            try connection.query("UPDATE webhook_deliveries SET locked_until = NULL WHERE id = ANY ($1::bigint[])",
                                 ["{" + ids.joined(separator: ",") + "}"])
        }
    }

    private enum Outcome: String {
        case delivered, failed, refused
    }

    /// One attempt; true when the endpoint answered 2xx.
    private func deliver(_ delivery: Claimed) -> Bool {
        let endpoint: PGRow
        do {
            guard let row = try pool.withConnection({ connection in
                try connection.query("""
                    SELECT url, secret_enc, CASE WHEN previous_secret_expires_at > now() THEN previous_secret_enc END AS previous
                    FROM webhook_endpoints WHERE id = $1 AND app_id = $2
                    """, [delivery.endpointId, delivery.appId]).first
            }) else { return true }  // deleted meanwhile, with its deliveries
            endpoint = row
        } catch {
            Log.warning("webhook delivery: store unavailable", ["error": "\(error)"])
            return true  // the lease runs out and the delivery is claimed again; the endpoint is not at fault
        }
        var status: Int?
        var error: String?
        var outcome = Outcome.failed
        let started = DispatchTime.now().uptimeNanoseconds
        do {
            let url = try endpoint.string("url")
            var keys = [try seal.open(try endpoint.bytes("secret_enc"), appId: delivery.appId, endpointId: delivery.endpointId)]
            if let previous = try endpoint.optionalBytes("previous") {
                keys.append(try seal.open(previous, appId: delivery.appId, endpointId: delivery.endpointId))
            }
            let body = Array(delivery.payload.utf8)
            let headers = StandardWebhookSignature.headers(id: delivery.eventId, timestamp: Timestamp.nowSeconds(),
                                                           body: body, keys: keys)
                + [("Content-Type", "application/json"), ("User-Agent", "identity-webhooks/1")]
            let response = try http.post(url, body: delivery.payload, headers: headers, policy: settings.policy)
            status = response.status
            if (200..<300).contains(response.status) { outcome = .delivered } else { error = "HTTP \(response.status)" }
        } catch let failure as OutboundHTTP.Failure {
            error = String(failure.description.prefix(300))
            if failure.refusal != nil { outcome = .refused }
        } catch let other {
            error = String("\(other)".prefix(300))
        }
        let elapsed = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
        WebhookMetrics.latency.observe(elapsed)
        WebhookMetrics.deliveries.inc(outcome.rawValue)
        record(delivery, outcome: outcome, status: status, milliseconds: Int(elapsed * 1000), error: error)
        return outcome == .delivered
    }

    /// The attempt in the log and the delivery's next state: delivered; due again after the
    /// schedule's next delay; or dead-lettered when the schedule is spent or the address refused
    /// (replayable through the admin API).
    private func record(_ delivery: Claimed, outcome: Outcome, status: Int?, milliseconds: Int, error: String?) {
        let attempts = delivery.attempts + 1
        let dead = outcome == .refused || (outcome == .failed && attempts > settings.retrySchedule.count)
        let state = outcome == .delivered ? "delivered" : dead ? "dead" : "pending"
        let delay = outcome == .failed && !dead ? settings.retrySchedule[attempts - 1] : 0
        let logged = dead ? "dead_lettered" : outcome.rawValue
        do {
            try pool.transaction { connection in
                try connection.query("""
                    INSERT INTO webhook_attempts (delivery_id, endpoint_id, app_id, status_code, duration_ms, outcome, error)
                    VALUES ($1, $2, $3, $4, $5, $6, $7)
                    """, [delivery.id, delivery.endpointId, delivery.appId, status.map(String.init), String(milliseconds),
                          logged, error])
                try connection.query("""
                    UPDATE webhook_deliveries
                    SET attempts = $2, state = $3, locked_until = NULL,
                        next_attempt_at = now() + make_interval(secs => $4::float8),
                        finished_at = CASE WHEN $3 = 'pending' THEN NULL ELSE now() END
                    WHERE id = $1
                    """, [delivery.id, String(attempts), state, String(delay)])
            }
        } catch {
            Log.warning("webhook delivery: could not record the attempt", ["error": "\(error)"])
            return
        }
        if dead { WebhookMetrics.deliveries.inc("dead_lettered") }
        let fields = ["webhook_id": delivery.eventId, "endpoint": delivery.endpointId, "app_id": delivery.appId,
                      "attempt": String(attempts), "status": status.map(String.init) ?? "-", "took_ms": String(milliseconds)]
        switch state {
        case "delivered": Log.debug("webhook delivered", fields)
        case "dead": Log.warning("webhook dead-lettered", fields.merging(["error": error ?? ""]) { $1 })
        default: Log.info("webhook attempt failed, will retry", fields.merging(["error": error ?? "", "retry_in_s": String(delay)]) { $1 })
        }
    }
}
