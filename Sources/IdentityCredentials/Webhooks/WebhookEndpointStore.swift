import Foundation
import IdentityKit

/// An app's webhook endpoints as the admin API and identityctl manage them. Every query is
/// scoped by the app: another app's endpoint id is simply not found. Answers are the admin
/// API's shapes (answers.proto: Webhook, WebhookWithSecret, WebhookDelivery, WebhookReplay).
public struct WebhookEndpointStore: Sendable {
    public struct Change: Sendable {
        public var url: String?
        public var events: [String]?
        public var description: String?
        public var enabled: Bool?
        public init(url: String? = nil, events: [String]? = nil, description: String? = nil, enabled: Bool? = nil) {
            self.url = url
            self.events = events
            self.description = description
            self.enabled = enabled
        }
    }

    let pool: PGPool
    let seal: WebhookSecretSeal

    public init(pool: PGPool, masterKey: [UInt8]) {
        self.pool = pool
        seal = WebhookSecretSeal(masterKey: masterKey)
    }

    /// What is wrong with `url` as an endpoint under `policy`: the URL as written (https, a
    /// literal address) and where its host resolves now. The webhook worker checks the address
    /// again at every connect.
    public static func urlProblem(_ url: String, policy: OutboundAddressPolicy) -> String? {
        guard url.utf8.count <= 2048 else { return "must be at most 2048 characters" }
        return policy.problem(url: url) ?? policy.lookupProblem(url: url)
    }

    private static let columns = """
        id, url, event_types, description, enabled,
        CASE WHEN previous_secret_expires_at > now()
             THEN (extract(epoch FROM previous_secret_expires_at) * 1000000)::bigint END AS previous_us,
        (extract(epoch FROM created_at) * 1000000)::bigint AS created_us,
        (extract(epoch FROM updated_at) * 1000000)::bigint AS updated_us
        """

    private static func json(_ row: PGRow) throws -> JSONValue {
        .object([
            "id": .string(try row.string("id")),
            "url": .string(try row.string("url")),
            "events": JSONValue(try row.stringArray("event_types")),
            "description": JSONValue(try row.optionalString("description")),
            "enabled": .bool(try row.bool("enabled")),
            "previous_secret_expires_at": JSONValue(try row.optionalString("previous_us").flatMap(Int64.init)
                .map(Timestamp.rfc3339(microsecondsSinceEpoch:))),
            "created_at": .string(Timestamp.rfc3339(microsecondsSinceEpoch: try row.int64("created_us"))),
            "updated_at": .string(Timestamp.rfc3339(microsecondsSinceEpoch: try row.int64("updated_us"))),
        ])
    }

    private static func withSecret(_ endpoint: JSONValue, _ secret: [UInt8]) -> JSONValue {
        guard case .object(var fields) = endpoint else { return endpoint }
        fields["secret"] = .string(StandardWebhookSignature.secretPrefix + Data(secret).base64EncodedString())
        return .object(fields)
    }

    /// A new endpoint, enabled, with a new secret (shown in the answer, stored sealed).
    public func create(appId: String, url: String, events: [String], description: String?) throws -> JSONValue {
        let id = "whk_" + Identifiers.nowULID().lowercased()
        let secret = SecureRandom.bytes(32)
        let sealed = try seal.seal(secret, appId: appId, endpointId: id)
        let rows = try pool.withConnection { connection in
            try connection.query("""
                INSERT INTO webhook_endpoints (id, app_id, url, event_types, description, secret_enc)
                SELECT $1, id, $3, $4::text[], $5, $6 FROM apps WHERE id = $2
                RETURNING \(Self.columns)
                """, [id, appId, url, PGParam.textArray(events), description, PGParam.bytea(sealed)])
        }
        guard let row = rows.first else { throw ServiceError.notFound }
        return Self.withSecret(try Self.json(row), secret)
    }

    public func list(appId: String) throws -> [JSONValue] {
        try pool.withConnection { connection in
            try connection.query("SELECT \(Self.columns) FROM webhook_endpoints WHERE app_id = $1 ORDER BY created_at, id",
                                 [appId]).map(Self.json)
        }
    }

    public func get(appId: String, id: String) throws -> JSONValue? {
        try pool.withConnection { connection in
            try connection.query("SELECT \(Self.columns) FROM webhook_endpoints WHERE app_id = $1 AND id = $2",
                                 [appId, id]).first.map(Self.json)
        }
    }

    public func update(appId: String, id: String, _ change: Change) throws -> JSONValue? {
        try pool.withConnection { connection in
            try connection.query("""
                UPDATE webhook_endpoints SET url = coalesce($3, url), event_types = coalesce($4::text[], event_types),
                       description = CASE WHEN $5::boolean THEN $6 ELSE description END,
                       enabled = coalesce($7::boolean, enabled), updated_at = now()
                WHERE app_id = $1 AND id = $2
                RETURNING \(Self.columns)
                """, [appId, id, change.url, change.events.map(PGParam.textArray), PGParam.bool(change.description != nil),
                      change.description, change.enabled.map(PGParam.bool)]).first.map(Self.json)
        }
    }

    /// Removes the endpoint with its deliveries (pending ones included) and their log.
    public func delete(appId: String, id: String) throws -> Bool {
        try pool.withConnection { connection in
            !(try connection.query("DELETE FROM webhook_endpoints WHERE app_id = $1 AND id = $2 RETURNING id",
                                   [appId, id])).isEmpty
        }
    }

    /// A new secret; the current one becomes the previous and keeps signing for `overlapSeconds`
    /// (0: it stops at once). A previous secret still live before this is dropped.
    public func rotateSecret(appId: String, id: String, overlapSeconds: Int) throws -> JSONValue? {
        let secret = SecureRandom.bytes(32)
        let sealed = try seal.seal(secret, appId: appId, endpointId: id)
        let rows = try pool.withConnection { connection in
            try connection.query("""
                UPDATE webhook_endpoints
                SET previous_secret_enc = CASE WHEN $4::int > 0 THEN secret_enc END,
                    previous_secret_expires_at = CASE WHEN $4::int > 0 THEN now() + make_interval(secs => $4::int) END,
                    secret_enc = $3, updated_at = now()
                WHERE app_id = $1 AND id = $2
                RETURNING \(Self.columns)
                """, [appId, id, PGParam.bytea(sealed), String(overlapSeconds)])
        }
        guard let row = rows.first else { return nil }
        return Self.withSecret(try Self.json(row), secret)
    }

    /// The endpoint's last 50 deliveries, newest first, each with its last 5 attempts; nil when
    /// the app has no such endpoint.
    public func deliveries(appId: String, id: String) throws -> [JSONValue]? {
        try pool.withConnection { connection in
            guard !(try connection.query("SELECT 1 FROM webhook_endpoints WHERE app_id = $1 AND id = $2", [appId, id])).isEmpty
            else { return nil }
            let rows = try connection.query("""
                SELECT d.id, d.event_id, d.event_type, d.state, d.attempts,
                       CASE WHEN d.state = 'pending' THEN (extract(epoch FROM d.next_attempt_at) * 1000000)::bigint END AS next_us,
                       (extract(epoch FROM d.created_at) * 1000000)::bigint AS created_us,
                       coalesce((SELECT json_agg(json_build_object(
                                    'at_us', (extract(epoch FROM a.at) * 1000000)::bigint, 'status_code', a.status_code,
                                    'response_ms', a.duration_ms, 'outcome', a.outcome, 'error', a.error) ORDER BY a.id DESC)
                                 FROM (SELECT * FROM webhook_attempts WHERE delivery_id = d.id ORDER BY id DESC LIMIT 5) a),
                                '[]')::text AS attempts_json
                FROM webhook_deliveries d
                WHERE d.app_id = $1 AND d.endpoint_id = $2
                ORDER BY d.id DESC LIMIT 50
                """, [appId, id])
            return try rows.map { row in
                var attempts: [JSONValue] = []
                if case .array(let items)? = JSONValue.parse(Data(try row.string("attempts_json").utf8)) {
                    attempts = items.map { item in
                        var micros: Int64 = 0
                        if case .number(let value)? = item["at_us"] { micros = Int64(value) }
                        return .object([
                            "at": .string(Timestamp.rfc3339(microsecondsSinceEpoch: micros)),
                            "status_code": item["status_code"] ?? .null,
                            "response_ms": item["response_ms"] ?? .number(0),
                            "outcome": item["outcome"] ?? .null,
                            "error": item["error"] ?? .null,
                        ])
                    }
                }
                return .object([
                    "webhook_id": .string(try row.string("event_id")),
                    "event_type": .string(try row.string("event_type")),
                    "state": .string(try row.string("state")),
                    "attempts": .number(Double(try row.int("attempts"))),
                    "next_attempt_at": JSONValue(try row.optionalString("next_us").flatMap(Int64.init)
                        .map(Timestamp.rfc3339(microsecondsSinceEpoch:))),
                    "created_at": .string(Timestamp.rfc3339(microsecondsSinceEpoch: try row.int64("created_us"))),
                    "last_attempts": .array(attempts),
                ])
            }
        }
    }

    /// Queues the endpoint's dead-lettered deliveries again, with a fresh retry schedule and
    /// their own ids (the receiver's idempotency keys); nil when the app has no such endpoint.
    public func replay(appId: String, id: String) throws -> Int? {
        try pool.withConnection { connection in
            guard !(try connection.query("SELECT 1 FROM webhook_endpoints WHERE app_id = $1 AND id = $2", [appId, id])).isEmpty
            else { return nil }
            return try connection.query("""
                UPDATE webhook_deliveries SET state = 'pending', attempts = 0, next_attempt_at = now(),
                       locked_until = NULL, finished_at = NULL
                WHERE app_id = $1 AND endpoint_id = $2 AND state = 'dead'
                RETURNING id
                """, [appId, id]).count
        }
    }
}
