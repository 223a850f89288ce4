import IdentityKit

/// Ending sessions: one (sign-out, DELETE /v1/me/sessions/{id}) or all of a user's; and
/// removing a push device.
struct SessionEnding: Sendable {
    let pool: PGPool
    let sessions: SessionStore
    let devices: DeviceStore

    func unregister(_ command: RevocationV1.UnregisterDevice) throws -> RevocationV1.SessionsEnded {
        let removed = try pool.transaction { connection in
            try devices.unregister(appId: command.appId, uid: command.uid, deviceId: command.deviceId,
                                   reason: "removed_by_user", on: connection)
        }
        return RevocationV1.SessionsEnded(count: removed ? 1 : 0)
    }

    func endOne(_ command: RevocationV1.EndSession) throws -> RevocationV1.SessionsEnded {
        let ended = try pool.transaction { connection in
            try sessions.end(appId: command.appId, uid: command.uid, sessionId: command.sessionId,
                             reason: command.reason, on: connection)
        }
        return RevocationV1.SessionsEnded(count: Int32(ended.count), sessionIds: ended)
    }

    func endAll(_ command: RevocationV1.EndAllSessions) throws -> RevocationV1.SessionsEnded {
        let ended = try pool.transaction { connection in
            try sessions.end(appId: command.appId, uid: command.uid, sessionId: nil, except: command.exceptSessionId,
                             reason: command.reason, on: connection)
        }
        return RevocationV1.SessionsEnded(count: Int32(ended.count), sessionIds: ended)
    }
}
