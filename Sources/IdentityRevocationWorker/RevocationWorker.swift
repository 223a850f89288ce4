import Foundation
import IdentityKit

/// The revocation worker: ends sessions on command (each end committed with its
/// `session.revoked` event before the reply) and relays the event outbox to the broker.
public final class RevocationWorker: Sendable {
    private let consumer: CommandConsumer
    private let relay: OutboxRelay

    public init(configuration: RevocationWorkerConfiguration) throws {
        let pool = PGPool(url: configuration.common.databaseURL, size: configuration.common.databasePoolSize)
        let sessions = SessionEnding(pool: pool, sessions: SessionStore(pool: pool))
        consumer = try CommandConsumer(url: configuration.common.amqpURL, queue: BusTopology.revocationCommands,
                                       name: "revocation-worker", concurrency: configuration.concurrency) { message in
            CommandReplies.answer(message) { message in
                switch message.type {
                case RevocationV1.EndSession.protoName:
                    return try .init(sessions.endOne(ProtoJSON.decode(RevocationV1.EndSession.self, from: message.body)))
                case RevocationV1.EndAllSessions.protoName:
                    return try .init(sessions.endAll(ProtoJSON.decode(RevocationV1.EndAllSessions.self, from: message.body)))
                default:
                    return nil
                }
            }
        }
        relay = try OutboxRelay(url: configuration.common.amqpURL, pool: pool)
    }

    public func start() {
        relay.start()
        consumer.start()
    }

    public func stop() {
        consumer.stop()
        relay.stop()
    }
}

/// Ending sessions: one (sign-out, DELETE /v1/me/sessions/{id}) or all of a user's.
struct SessionEnding: Sendable {
    let pool: PGPool
    let sessions: SessionStore

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
