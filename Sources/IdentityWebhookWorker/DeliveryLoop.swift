import Foundation
import IdentityCredentials
import IdentityKit
import IdentityOutbound

/// Delivers pending webhook deliveries: a poller claims what is due (a lease, so several workers
/// share the table and a dead worker's claims come back), each delivery runs on its own thread
/// with a short timeout, at most `concurrency` in all and `endpointConcurrency` per endpoint,
/// so a slow or dead endpoint holds only its own few slots and no other app waits for it.
/// A user's deliveries to one endpoint go in order: one waits while an older one of the same
/// endpoint and user is pending.
final class DeliveryLoop: Sendable {
    struct Settings: Sendable {
        var concurrency: Int
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

    private struct State {
        var inFlight: [String: Int] = [:]
        var total = 0
        var stopping = false
    }

    private let pool: PGPool
    private let http: OutboundHTTP
    private let seal: WebhookSecretSeal
    private let settings: Settings
    private let state = Locked(State())
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
                (state.stopping, settings.concurrency - state.total,
                 state.inFlight.filter { $0.value >= settings.endpointConcurrency }.map(\.key))
            }
            if stopping { return }
            var claimedAny = false
            if free > 0 {
                do {
                    let claimed = try claim(limit: free, excluding: full)
                    claimedAny = !claimed.isEmpty
                    var released: [String] = []
                    for delivery in claimed {
                        let started = state.withLock { state -> Bool in
                            guard state.inFlight[delivery.endpointId, default: 0] < settings.endpointConcurrency else { return false }
                            state.inFlight[delivery.endpointId, default: 0] += 1
                            state.total += 1
                            return true
                        }
                        guard started else { released.append(delivery.id); continue }
                        deliveries.enter()
                        work.async { [self] in
                            defer {
                                state.withLock { state in
                                    state.inFlight[delivery.endpointId, default: 1] -= 1
                                    if state.inFlight[delivery.endpointId] == 0 { state.inFlight[delivery.endpointId] = nil }
                                    state.total -= 1
                                }
                                deliveries.leave()
                                wake.signal()
                            }
                            deliver(delivery)
                        }
                    }
                    if !released.isEmpty { try release(released) }
                } catch {
                    Log.warning("webhook deliveries: store unavailable", ["error": "\(error)"])
                }
            }
            // Straight on while there is work; otherwise until a delivery ends or the next poll.
            if !claimedAny { _ = wake.wait(timeout: .now() + settings.pollSeconds) }
        }
    }

    private func claim(limit: Int, excluding busy: [String]) throws -> [Claimed] {
        try pool.withConnection { connection in
            try connection.query("""
                WITH due AS (
                    SELECT d.id FROM webhook_deliveries d
                    JOIN webhook_endpoints e ON e.id = d.endpoint_id AND e.enabled
                    WHERE d.state = 'pending' AND d.next_attempt_at <= now()
                      AND (d.locked_until IS NULL OR d.locked_until < now())
                      AND NOT (d.endpoint_id = ANY ($2::text[]))
                      AND NOT EXISTS (SELECT 1 FROM webhook_deliveries o
                                      WHERE o.endpoint_id = d.endpoint_id AND o.ordering_key = d.ordering_key
                                        AND o.state = 'pending' AND o.id < d.id)
                    ORDER BY d.id LIMIT $1
                    FOR UPDATE OF d SKIP LOCKED
                )
                UPDATE webhook_deliveries w SET locked_until = now() + make_interval(secs => $3::int)
                FROM due WHERE w.id = due.id
                RETURNING w.id, w.endpoint_id, w.app_id, w.event_id, w.payload, w.attempts
                """, [String(limit), PGParam.textArray(busy), String(Self.leaseSeconds)]).map { row in
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

    private func deliver(_ delivery: Claimed) {
        let endpoint: PGRow
        do {
            guard let row = try pool.withConnection({ connection in
                try connection.query("""
                    SELECT url, secret_enc, CASE WHEN previous_secret_expires_at > now() THEN previous_secret_enc END AS previous
                    FROM webhook_endpoints WHERE id = $1 AND app_id = $2
                    """, [delivery.endpointId, delivery.appId]).first
            }) else { return }  // deleted meanwhile, with its deliveries
            endpoint = row
        } catch {
            Log.warning("webhook delivery: store unavailable", ["error": "\(error)"])
            return  // the lease runs out and the delivery is claimed again
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
