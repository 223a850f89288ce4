import Foundation
import IdentityCredentials
import IdentityKit
import IdentityOutbound

/// The provider worker: consumes `identity.provider.commands` (nonces, id-token
/// verification, Apple code exchange). It never creates accounts or signs tokens.
public final class ProviderWorker: Service {
    private let consumer: CommandConsumer
    private let pool: PGPool

    public init(configuration: ProviderWorkerConfiguration) throws {
        OutboundHTTP.initialize()
        let pool = PGPool(url: configuration.common.databaseURL, size: configuration.common.databasePoolSize)
        self.pool = pool
        let http = OutboundHTTP(timeoutMilliseconds: configuration.outboundTimeoutMilliseconds)
        let cache = { (url: String) in JWKSCache(url: url, http: http, refetchInterval: configuration.jwksRefetchInterval,
                                                      maximumStaleness: configuration.jwksMaximumStaleness) }
        let settings = ProviderSettingsStore(pool: pool)
        let nonces = NonceStore(pool: pool)
        let verifier = IdTokenVerifier(settings: settings, nonces: nonces, apple: cache(configuration.appleJWKSURL),
                                       google: cache(configuration.googleJWKSURL),
                                       firebase: cache(configuration.firebaseJWKSURL))
        let exchange = AppleCodeExchange(settings: settings, identities: IdentityStore(pool: pool),
                                         apple: AppleClient(tokenURL: configuration.appleTokenURL,
                                                            revokeURL: configuration.appleRevokeURL, http: http),
                                         masterKey: configuration.masterKey)
        let handlers = ProviderHandlers(nonces: nonces, nonceLifetime: configuration.nonceLifetimeSeconds,
                                        verifier: verifier, exchange: exchange,
                                        notifications: AppleNotificationVerifier(settings: settings, apple: verifier.apple),
                                        seal: ProviderIdentitySeal(masterKey: configuration.masterKey))
        consumer = try CommandConsumer(url: configuration.common.amqpURL,
                                       heartbeatSeconds: configuration.common.amqpHeartbeatSeconds,
                                       queue: BusTopology.providerCommands,
                                       name: "provider-worker", concurrency: configuration.concurrency) { message in
            CommandReplies.answer(message) { message in
                try ProviderCommandDispatch.table[message.type].map { try $0(handlers, message) }
            }
        }
    }

    public func start() { consumer.start() }
    public func stop() { consumer.stop() }
    public var readinessChecks: [OperationsListener.Check] { [Readiness.store(pool), Readiness.consuming(consumer)] }
}

/// One handler per command of the provider worker (the protocol and its dispatch table are
/// generated from gateway.proto).
struct ProviderHandlers: ProviderCommandHandlers {
    let nonces: NonceStore
    let nonceLifetime: Int
    let verifier: IdTokenVerifier
    let exchange: AppleCodeExchange
    let notifications: AppleNotificationVerifier
    let seal: ProviderIdentitySeal

    func handle(_ command: ProviderV1.IssueNonce, _ message: BusMessage) throws -> CommandConsumer.Reply {
        let issued = try nonces.issue(appId: command.appId, lifetimeSeconds: nonceLifetime)
        return try .init(ProviderV1.NonceIssued(
            nonce: issued.nonce, expiresAt: Timestamp.rfc3339(microsecondsSinceEpoch: issued.expiresAtMicros)))
    }

    /// Sealed: the token worker believes only identities this worker verified.
    func handle(_ command: ProviderV1.VerifyIdToken, _ message: BusMessage) throws -> CommandConsumer.Reply {
        try .init(seal.seal(verifier.verify(command), appId: command.appId))
    }

    /// Sealed like an identity: the token worker applies only events this worker verified.
    func handle(_ command: ProviderV1.VerifyAppleNotification, _ message: BusMessage) throws -> CommandConsumer.Reply {
        try .init(seal.seal(notifications.verify(command), appId: command.appId))
    }

    /// Sent through the outbox: no one waits for a reply. A token whose account is gone
    /// meanwhile goes on to the revocation worker.
    func handle(_ command: ProviderV1.ExchangeAppleCode, _ message: BusMessage) throws -> CommandConsumer.Reply {
        .none(followUps: exchange.handle(command))
    }
}
