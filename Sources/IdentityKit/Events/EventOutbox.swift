import Foundation

/// Writes events into the outbox table inside the caller's transaction (see
/// migrations/0002_outbox.sql): the event exists exactly when the change it reports does.
public enum EventOutbox {
    /// The topic exchange events are published on.
    public static let exchange = "identity.events"

    /// A fresh event id and time for an event message.
    public static func stamp() -> (eventId: String, time: String) {
        ("evt_" + Identifiers.nowULID(), Timestamp.rfc3339(Date()))
    }

    /// Queues an event: published on `exchange` with routing key `<app_id>.<routingKey>`
    /// (`app_0123.user.created`), so a tenant's consumer binds to `<its app id>.#` and sees its
    /// own events only. Commands (`appendCommand`, default exchange) keep the queue name.
    public static func append<Event: ProtoMessage>(_ event: Event, routingKey: String, appId: String, eventId: String,
                                                   exchange: String = EventOutbox.exchange,
                                                   on connection: PGConnection) throws {
        let payload = String(decoding: try ProtoJSON.encode(event), as: UTF8.self)
        let key = exchange.isEmpty ? routingKey : appId + "." + routingKey
        try connection.query("""
            INSERT INTO outbox (app_id, event_id, exchange, routing_key, message_type, payload)
            VALUES ($1, $2, $3, $4, $5, $6)
            """, [appId, eventId, exchange, key, Event.protoName, payload])
    }

    /// A command for a worker queue that must go out exactly when this transaction commits
    /// (published on the default exchange, routed by queue name).
    public static func appendCommand<Command: ProtoMessage>(_ command: Command, queue: String, appId: String,
                                                            on connection: PGConnection) throws {
        try append(command, routingKey: queue, appId: appId, eventId: "cmd_" + Identifiers.nowULID(), exchange: "",
                   on: connection)
    }
}

/// The events every flow publishes, built in one place so each carries the common fields.
public enum Events {
    public static func userCreated(appId: String, uid: String, email: String?, on connection: PGConnection) throws {
        let (id, time) = EventOutbox.stamp()
        try EventOutbox.append(EventsV1.UserCreated(eventId: id, appId: appId, uid: uid, time: time, email: email),
                               routingKey: "user.created", appId: appId, eventId: id, on: connection)
    }

    public static func sessionCreated(appId: String, uid: String, sessionId: String, amr: [String],
                                      on connection: PGConnection) throws {
        let (id, time) = EventOutbox.stamp()
        try EventOutbox.append(EventsV1.SessionCreated(eventId: id, appId: appId, uid: uid, time: time,
                                                       sessionId: sessionId, amr: amr),
                               routingKey: "session.created", appId: appId, eventId: id, on: connection)
    }

    public static func sessionRevoked(appId: String, uid: String, sessionId: String, reason: String,
                                      on connection: PGConnection) throws {
        let (id, time) = EventOutbox.stamp()
        try EventOutbox.append(EventsV1.SessionRevoked(eventId: id, appId: appId, uid: uid, time: time,
                                                       sessionId: sessionId, reason: reason),
                               routingKey: "session.revoked", appId: appId, eventId: id, on: connection)
    }

    public static func refreshTokenReuseDetected(appId: String, uid: String, sessionId: String,
                                                 on connection: PGConnection) throws {
        let (id, time) = EventOutbox.stamp()
        try EventOutbox.append(EventsV1.RefreshTokenReuseDetected(eventId: id, appId: appId, uid: uid, time: time,
                                                                  sessionId: sessionId),
                               routingKey: "refresh_token.reuse_detected", appId: appId, eventId: id, on: connection)
    }

    public static func userDeleted(appId: String, uid: String, on connection: PGConnection) throws {
        let (id, time) = EventOutbox.stamp()
        try EventOutbox.append(EventsV1.UserDeleted(eventId: id, appId: appId, uid: uid, time: time),
                               routingKey: "user.deleted", appId: appId, eventId: id, on: connection)
    }

    /// `user.disabled`, or `user.enabled` when `disabled` is false.
    public static func userDisabled(appId: String, uid: String, disabled: Bool, on connection: PGConnection) throws {
        let (id, time) = EventOutbox.stamp()
        try EventOutbox.append(EventsV1.UserDisabled(eventId: id, appId: appId, uid: uid, time: time, disabled: disabled),
                               routingKey: disabled ? "user.disabled" : "user.enabled", appId: appId, eventId: id,
                               on: connection)
    }

    public static func mfaEnabled(appId: String, uid: String, method: String, on connection: PGConnection) throws {
        let (id, time) = EventOutbox.stamp()
        try EventOutbox.append(EventsV1.MfaEnabled(eventId: id, appId: appId, uid: uid, time: time, method: method),
                               routingKey: "mfa.enabled", appId: appId, eventId: id, on: connection)
    }

    public static func mfaDisabled(appId: String, uid: String, reason: String, on connection: PGConnection) throws {
        let (id, time) = EventOutbox.stamp()
        try EventOutbox.append(EventsV1.MfaDisabled(eventId: id, appId: appId, uid: uid, time: time, reason: reason),
                               routingKey: "mfa.disabled", appId: appId, eventId: id, on: connection)
    }

    /// `removed`: what an `email_ownership_proved` change took from the account (the proto's
    /// `UserUpdated.removed` names the entries).
    public static func userUpdated(appId: String, uid: String, change: String, removed: [String] = [],
                                   on connection: PGConnection) throws {
        let (id, time) = EventOutbox.stamp()
        try EventOutbox.append(EventsV1.UserUpdated(eventId: id, appId: appId, uid: uid, time: time, change: change,
                                                    removed: removed),
                               routingKey: "user.updated", appId: appId, eventId: id, on: connection)
    }

    public static func deviceRegistered(_ device: DeviceRecord, on connection: PGConnection) throws {
        let (id, time) = EventOutbox.stamp()
        try EventOutbox.append(EventsV1.DeviceRegistered(eventId: id, appId: device.appId, uid: device.uid, time: time,
                                                         deviceId: device.id, token: device.token,
                                                         platform: device.platform, kind: device.kind,
                                                         sessionId: device.sessionId),
                               routingKey: "device.registered", appId: device.appId, eventId: id, on: connection)
    }

    public static func deviceUnregistered(_ device: DeviceRecord, reason: String, on connection: PGConnection) throws {
        let (id, time) = EventOutbox.stamp()
        try EventOutbox.append(EventsV1.DeviceUnregistered(eventId: id, appId: device.appId, uid: device.uid, time: time,
                                                           deviceId: device.id, token: device.token,
                                                           platform: device.platform, kind: device.kind, reason: reason),
                               routingKey: "device.unregistered", appId: device.appId, eventId: id, on: connection)
    }

    public static func passkeyAdded(appId: String, uid: String, passkeyId: String, on connection: PGConnection) throws {
        let (id, time) = EventOutbox.stamp()
        try EventOutbox.append(EventsV1.PasskeyAdded(eventId: id, appId: appId, uid: uid, time: time, passkeyId: passkeyId),
                               routingKey: "passkey.added", appId: appId, eventId: id, on: connection)
    }

    public static func passkeyRemoved(appId: String, uid: String, passkeyId: String, on connection: PGConnection) throws {
        let (id, time) = EventOutbox.stamp()
        try EventOutbox.append(EventsV1.PasskeyRemoved(eventId: id, appId: appId, uid: uid, time: time,
                                                       passkeyId: passkeyId),
                               routingKey: "passkey.removed", appId: appId, eventId: id, on: connection)
    }

    /// A security event: an assertion's signature counter did not move forward.
    public static func passkeySignCountRegressed(appId: String, uid: String, passkeyId: String, stored: Int64,
                                                 received: Int64, on connection: PGConnection) throws {
        let (id, time) = EventOutbox.stamp()
        try EventOutbox.append(EventsV1.PasskeySignCountRegressed(eventId: id, appId: appId, uid: uid, time: time,
                                                                  passkeyId: passkeyId, storedCount: stored,
                                                                  receivedCount: received),
                               routingKey: "passkey.sign_count_regressed", appId: appId, eventId: id, on: connection)
    }
}
