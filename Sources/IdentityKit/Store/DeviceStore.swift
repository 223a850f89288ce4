/// A push device row.
public struct DeviceRecord: Sendable {
    public let appId: String
    public let id: String
    public let uid: String
    public let sessionId: String
    public let token: String
    public let platform: String
    public let kind: String
    public let deviceName: String?
    public let createdAtMicros: Int64

    static let columns = """
        app_id, id, uid, session_id, token, platform, kind, device_name, \
        (extract(epoch FROM created_at) * 1000000)::bigint AS created_us
        """

    init(row: PGRow) throws {
        appId = try row.string("app_id")
        id = try row.string("id")
        uid = try row.string("uid")
        sessionId = try row.string("session_id")
        token = try row.string("token")
        platform = try row.string("platform")
        kind = try row.string("kind")
        deviceName = try row.optionalString("device_name")
        createdAtMicros = try row.int64("created_us")
    }

    public var message: CommonV1.Device {
        CommonV1.Device(id: id, token: token, platform: platform, kind: kind, deviceName: deviceName, sessionId: sessionId,
                        createdAt: Timestamp.rfc3339(microsecondsSinceEpoch: createdAtMicros))
    }
}

/// Push devices, each tied to the session that registered it: when the session ends, its
/// devices are unregistered and `device.unregistered` tells push operators to stop.
public struct DeviceStore: Sendable {
    let pool: PGPool

    public init(pool: PGPool) { self.pool = pool }

    /// Registers a token for a session. A token already known (in this app) moves here: from
    /// another session of the same user it keeps its id; from another user it is first
    /// unregistered from them, with `device.unregistered`, so a push operator stops sending
    /// that user's notifications to a phone that now belongs to someone else.
    public func register(appId: String, uid: String, sessionId: String, token: String, platform: String, kind: String,
                         deviceName: String?, on connection: PGConnection) throws -> DeviceRecord? {
        let previous = try connection.query("""
            DELETE FROM devices WHERE app_id = $1 AND token = $2 AND uid <> $3 RETURNING \(DeviceRecord.columns)
            """, [appId, token, uid]).map(DeviceRecord.init(row:))
        for device in previous { try Events.deviceUnregistered(device, reason: "registered_by_another_user", on: connection) }
        return try connection.query("""
            INSERT INTO devices (app_id, id, uid, session_id, token, platform, kind, device_name)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
            ON CONFLICT (app_id, token) DO UPDATE SET uid = EXCLUDED.uid, session_id = EXCLUDED.session_id,
                platform = EXCLUDED.platform, kind = EXCLUDED.kind, device_name = EXCLUDED.device_name, updated_at = now()
            RETURNING \(DeviceRecord.columns)
            """, [appId, Identifiers.prefixed("dev"), uid, sessionId, token, platform, kind, deviceName])
            .first.map(DeviceRecord.init(row:))
    }

    public func list(appId: String, uid: String) throws -> [DeviceRecord] {
        try pool.withConnection { connection in
            try connection.query("""
                SELECT \(DeviceRecord.columns) FROM devices WHERE app_id = $1 AND uid = $2
                ORDER BY created_at DESC, id DESC
                """, [appId, uid]).map(DeviceRecord.init(row:))
        }
    }

    /// Removes one of the user's devices, with its event; false when the user has no such device.
    public func unregister(appId: String, uid: String, deviceId: String, reason: String,
                           on connection: PGConnection) throws -> Bool {
        let removed = try connection.query("""
            DELETE FROM devices WHERE app_id = $1 AND uid = $2 AND id = $3 RETURNING \(DeviceRecord.columns)
            """, [appId, uid, deviceId]).map(DeviceRecord.init(row:))
        for device in removed { try Events.deviceUnregistered(device, reason: reason, on: connection) }
        return !removed.isEmpty
    }

    /// Removes the devices of ended sessions, with their events.
    static func unregister(appId: String, sessionIds: [String], reason: String, on connection: PGConnection) throws {
        guard !sessionIds.isEmpty else { return }
        let removed = try connection.query("""
            DELETE FROM devices WHERE app_id = $1 AND session_id = ANY($2::text[]) RETURNING \(DeviceRecord.columns)
            """, [appId, PGParam.textArray(sessionIds)]).map(DeviceRecord.init(row:))
        for device in removed { try Events.deviceUnregistered(device, reason: reason, on: connection) }
    }
}
