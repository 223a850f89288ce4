import Foundation

/// The audit log (migration 0012): one row per admin call and per security event, never
/// changed afterwards (no process may UPDATE or DELETE it). Every query is scoped by app.
public struct AuditLog: Sendable {
    let pool: PGPool

    public init(pool: PGPool) { self.pool = pool }

    public struct Entry: Sendable {
        public var actor: String
        public var action: String
        public var target: String?
        public var ip: String?
        public var requestId: String?
        public var detail: JSONValue

        public init(actor: String, action: String, target: String? = nil, ip: String? = nil, requestId: String? = nil,
                    detail: JSONValue = .object([:])) {
            self.actor = actor
            self.action = action
            self.target = target
            self.ip = ip
            self.requestId = requestId
            self.detail = detail
        }
    }

    public func append(appId: String, _ entry: Entry) throws {
        try pool.withConnection { try Self.append(appId: appId, entry, on: $0) }
    }

    /// Inside the caller's transaction: a security event is recorded with the change it reports.
    public static func append(appId: String, _ entry: Entry, on connection: PGConnection) throws {
        try connection.query("""
            INSERT INTO audit_log (app_id, actor, action, target, ip, request_id, detail)
            VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb)
            """, [appId, entry.actor, entry.action, entry.target, entry.ip, entry.requestId, entry.detail.serialized])
    }

    /// A row as `GET /v1/admin/audit` shows it.
    public struct Row: Sendable {
        public let id: Int64
        public let atMicros: Int64
        public let entry: Entry
    }

    /// Filters of `GET /v1/admin/audit`; `before` is the cursor (rows with a smaller id).
    public struct Query: Sendable {
        public var actor: String?
        public var action: String?
        public var target: String?
        public var sinceMicros: Int64?
        public var untilMicros: Int64?
        public var before: Int64?
        public var limit: Int

        public init(actor: String? = nil, action: String? = nil, target: String? = nil, sinceMicros: Int64? = nil,
                    untilMicros: Int64? = nil, before: Int64? = nil, limit: Int = 50) {
            self.actor = actor
            self.action = action
            self.target = target
            self.sinceMicros = sinceMicros
            self.untilMicros = untilMicros
            self.before = before
            self.limit = limit
        }
    }

    /// Newest first.
    public func list(appId: String, _ query: Query) throws -> [Row] {
        try pool.withConnection { connection in
            try connection.query("""
                SELECT id, actor, action, target, ip, request_id, detail::text AS detail,
                       (extract(epoch FROM at) * 1000000)::bigint AS at_us
                FROM audit_log
                WHERE app_id = $1 AND ($2::text IS NULL OR actor = $2) AND ($3::text IS NULL OR action = $3)
                  AND ($4::text IS NULL OR target = $4)
                  AND ($5::bigint IS NULL OR at >= to_timestamp($5::bigint / 1000000.0))
                  AND ($6::bigint IS NULL OR at < to_timestamp($6::bigint / 1000000.0))
                  AND ($7::bigint IS NULL OR id < $7)
                ORDER BY id DESC LIMIT $8
                """, [appId, query.actor, query.action, query.target, query.sinceMicros.map(String.init),
                      query.untilMicros.map(String.init), query.before.map(String.init), String(query.limit)]).map { row in
                let detail = JSONValue.parse(Data(try row.string("detail").utf8)) ?? .object([:])
                return try Row(id: row.int64("id"), atMicros: row.int64("at_us"),
                               entry: Entry(actor: row.string("actor"), action: row.string("action"),
                                            target: row.optionalString("target"), ip: row.optionalString("ip"),
                                            requestId: row.optionalString("request_id"), detail: detail))
            }
        }
    }
}
