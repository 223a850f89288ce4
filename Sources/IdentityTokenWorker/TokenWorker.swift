import Foundation
import IdentityKit

/// The token worker: consumes `identity.token.commands` and answers each command by its AMQP
/// `type`. Failures are answered with `identity.common.v1.Error`; internal causes are logged
/// here and reach the caller only as `auth/internal`.
public final class TokenWorker: Sendable {
    private let consumer: CommandConsumer
    private let pool: PGPool

    public init(configuration: TokenWorkerConfiguration) throws {
        let pool = PGPool(url: configuration.common.databaseURL, size: configuration.common.databasePoolSize)
        self.pool = pool
        let users = UserStore(pool: pool)
        let hasher = try PasswordHasher(cost: configuration.passwordCost)
        let issuer = SessionIssuer(sessions: SessionStore(pool: pool),
                                   keys: SigningKeyCache(apps: AppStore(pool: pool), masterKey: configuration.masterKey),
                                   refreshTokenLifetimeSeconds: configuration.refreshTokenLifetimeSeconds)
        let router = CommandRouter(
            signUp: PasswordSignUp(pool: pool, users: users, hasher: hasher, issuer: issuer),
            signIn: PasswordSignIn(pool: pool, users: users, hasher: hasher, issuer: issuer),
            profile: ProfileUpdate(users: users),
            workerName: ProcessInfo.processInfo.hostName + ":" + String(getpid()))
        consumer = try CommandConsumer(url: configuration.common.amqpURL, queue: BusTopology.tokenCommands,
                                       name: "token-worker", concurrency: configuration.concurrency,
                                       handler: router.handle)
    }

    public func start() { consumer.start() }
    public func stop() { consumer.stop() }
}

/// Decodes a command by its type, runs its flow, and encodes the answer.
struct CommandRouter: Sendable {
    let signUp: PasswordSignUp
    let signIn: PasswordSignIn
    let profile: ProfileUpdate
    let workerName: String

    func handle(_ message: BusMessage) -> CommandConsumer.Reply {
        do {
            switch message.type {
            case TokenV1.SignUp.protoName:
                return try .init(signUp.handle(ProtoJSON.decode(TokenV1.SignUp.self, from: message.body)))
            case TokenV1.SignIn.protoName:
                return try .init(signIn.handle(ProtoJSON.decode(TokenV1.SignIn.self, from: message.body)))
            case TokenV1.UpdateProfile.protoName:
                return try .init(profile.handle(ProtoJSON.decode(TokenV1.UpdateProfile.self, from: message.body)))
            case TokenV1.Ping.protoName:
                return try .init(TokenV1.Pong(worker: workerName))
            default:
                Log.warning("unknown command type", ["type": message.type, "request_id": message.requestId])
                return Self.errorReply(.internal)
            }
        } catch let error as ServiceError {
            return Self.errorReply(error)
        } catch let error as StoreError {
            if case .unavailable = error {
                Log.warning("store unavailable", ["type": message.type, "request_id": message.requestId])
                return Self.errorReply(.unavailable)
            }
            Log.error("command failed", ["type": message.type, "request_id": message.requestId, "error": error.description])
            return Self.errorReply(.internal)
        } catch {
            Log.error("command failed", ["type": message.type, "request_id": message.requestId,
                                         "error": String(describing: error)])
            return Self.errorReply(.internal)
        }
    }

    static func errorReply(_ error: ServiceError) -> CommandConsumer.Reply {
        let message = CommonV1.Error(code: error.code, status: Int32(error.status), detail: error.detail,
                                     errors: error.errors.map { CommonV1.FieldError(location: $0.location, message: $0.message) })
        // Encoding a generated message with plain strings cannot fail; the fallback keeps the
        // reply path free of `try!` all the same.
        return (try? CommandConsumer.Reply(message)) ?? CommandConsumer.Reply.empty
    }
}
