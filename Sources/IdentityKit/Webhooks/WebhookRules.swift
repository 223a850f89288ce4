import Foundation

/// What an app's webhook endpoint takes and how a delivery is retried: the rules the admin API,
/// identityctl and the webhook worker share.
public enum WebhookRules {
    /// An endpoint's filter: `["*"]` (every event) or up to 50 event names such as
    /// `user.created` (lower-case words joined by dots).
    public static func eventsProblem(_ events: [String]) -> String? {
        guard (1...50).contains(events.count) else { return "must list 1 to 50 event names, or [\"*\"]" }
        if events.contains("*") { return events.count == 1 ? nil : "\"*\" stands alone: it already takes every event" }
        for name in events where !isEventName(name) {
            return "\(name.prefix(64)) is not an event name (lower-case words joined by dots, such as user.created)"
        }
        return nil
    }

    static func isEventName(_ name: String) -> Bool {
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        return name.utf8.count <= 64 && parts.count >= 2 && parts.allSatisfy { part in
            !part.isEmpty && part.utf8.allSatisfy { ($0 >= 97 && $0 <= 122) || ($0 >= 48 && $0 <= 57) || $0 == 95 }
        }
    }

    /// A description: at most 200 characters.
    public static func descriptionProblem(_ text: String) -> String? {
        text.unicodeScalars.count <= 200 ? nil : "must be at most 200 characters"
    }

    /// The body a receiver gets for an event: the Standard Webhooks envelope, `type` (the event's
    /// name), `timestamp` (when it happened) and `data` (the event as the stream carries it,
    /// proto3 JSON). nil when the event is not a JSON object.
    public static func payload(eventName: String, eventJSON: Data) -> (body: String, uid: String, time: String)? {
        guard case .object(let fields)? = JSONValue.parse(eventJSON) else { return nil }
        let time: String
        if case .string(let stamped)? = fields["time"] { time = stamped } else { time = Timestamp.rfc3339(Date()) }
        let uid: String
        if case .string(let user)? = fields["uid"] { uid = user } else { uid = "" }
        let data = String(decoding: eventJSON, as: UTF8.self)
        let body = "{\"type\":" + JSONValue.string(eventName).serialized + ",\"timestamp\":" + JSONValue.string(time).serialized
            + ",\"data\":" + data + "}"
        return (body, uid, time)
    }

    /// Delays between attempts: the first attempt is at once, the next ones after each of these
    /// in turn; after the last, the delivery is dead-lettered. The default spans 27.6 hours:
    /// 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h.
    public static let defaultRetrySchedule: [Double] = [5, 300, 1800, 7200, 18_000, 36_000, 36_000]

    /// `5s,5m,30m,2h` (also `250ms`): seconds each, or nil when a part is not a positive duration.
    public static func parseSchedule(_ text: String) -> [Double]? {
        var delays: [Double] = []
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            let item = part.trimmingCharacters(in: .whitespaces)
            let units: [(String, Double)] = [("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600)]
            guard let (suffix, scale) = units.first(where: { item.hasSuffix($0.0) }),
                  let number = Double(item.dropLast(suffix.count)), number > 0, number.isFinite else { return nil }
            delays.append(number * scale)
        }
        return delays.isEmpty ? nil : delays
    }
}
