import Foundation
import IdentityKit

/// Turns each event of the stream into one pending delivery per endpoint of its app whose
/// filter takes it, in one statement (so an event redelivered by the broker adds nothing: one
/// row per endpoint and event). Events arrive one at a time (prefetch 1) in the order the relay
/// published them, so rows' ids keep each user's order.
///
/// Only events the outbox relay published are taken: an event becomes a signed request to the
/// app's backend, so a message on this queue from any other broker user (every process that may
/// publish on the default exchange can reach the queue) is dropped, counted and logged.
struct EventIntake: Sendable {
    let pool: PGPool
    /// Broker users vouched for by the message's `user_id` (`IDENTITY_AMQP_EVENT_PUBLISHERS`,
    /// and this worker's own user: a deployment with one broker user has no boundary to keep).
    let trustedPublishers: Set<String>

    /// Records `message`; while the store is down it keeps trying, the event unacked (a worker
    /// stopped meanwhile exits without acking it, and the broker hands it to the next one).
    func take(_ message: BusMessage) {
        guard trustedPublishers.contains(message.publisher) else {
            WebhookMetrics.refusedEvents.inc()
            Log.warning("webhook intake: an event from a publisher that is not the outbox relay, dropped",
                        ["publisher": message.publisher, "type": message.type, "routing_key": message.routingKey])
            return
        }
        let appId = message.appId
        guard !appId.isEmpty, message.routingKey.hasPrefix(appId + ".") else {
            Log.warning("webhook intake: an event without its app", ["type": message.type, "routing_key": message.routingKey])
            return
        }
        let name = String(message.routingKey.dropFirst(appId.count + 1))
        guard let payload = WebhookRules.payload(eventName: name, eventJSON: message.body) else {
            Log.warning("webhook intake: an event that is not a JSON object", ["type": message.type, "event_id": message.messageId])
            return
        }
        let eventId = message.messageId.isEmpty ? "evt_" + Identifiers.nowULID() : message.messageId
        var delay = 0.2
        while true {
            do {
                _ = try pool.withConnection { connection in
                    try connection.query("""
                        INSERT INTO webhook_deliveries (endpoint_id, app_id, event_id, event_type, ordering_key, payload)
                        SELECT id, app_id, $2, $3, $4, $5 FROM webhook_endpoints
                        WHERE app_id = $1 AND ('*' = ANY (event_types) OR $3 = ANY (event_types))
                        ON CONFLICT (endpoint_id, event_id) DO NOTHING
                        """, [appId, eventId, name, payload.uid, payload.body])
                }
                return
            } catch {
                Log.warning("webhook intake: store unavailable, retrying", ["event_id": eventId, "error": "\(error)"])
                Thread.sleep(forTimeInterval: delay)
                delay = min(delay * 2, 5)
            }
        }
    }
}
