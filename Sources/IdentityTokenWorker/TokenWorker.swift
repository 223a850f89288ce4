import Foundation
import IdentityCredentials
import IdentityKit
import IdentityOutbound

/// The token worker: consumes `identity.token.commands` and answers each command by its AMQP
/// `type` (failures become `identity.common.v1.Error` through `CommandReplies`).
public final class TokenWorker: Service {
    private let consumer: CommandConsumer
    private let pool: PGPool

    public init(configuration: TokenWorkerConfiguration) throws {
        OutboundHTTP.initialize()  // auth hooks: libcurl, once, before any thread calls one
        let pool = PGPool(url: configuration.common.databaseURL, size: configuration.common.databasePoolSize)
        self.pool = pool
        let users = UserStore(pool: pool)
        let hasher = try PasswordHasher(cost: configuration.passwordCost,
                                        concurrentHashes: configuration.concurrentPasswordHashes)
            .peppered(masterKey: configuration.masterKey)  // ASVS 2.4.5: docs/security.md, PasswordHasher
        let sessions = SessionStore(pool: pool)
        let identities = IdentityStore(pool: pool)
        let passkeys = PasskeyStore(pool: pool)
        let phones = UserPhoneStore()
        let factorStore = MfaStore(pool: pool)
        let ownership = EmailOwnership(users: users, sessions: sessions, identities: identities, passkeys: passkeys,
                                       phones: phones, factors: factorStore)
        let smsSettings = SmsSettingsStore(pool: pool)
        // The one "last way in" count of every removal (unlinking a provider, deleting a passkey).
        let waysIn = WaysInReader(passkeys: passkeys, phones: phones, sms: smsSettings)
        // Made once: every provider identity a command brings is checked against it.
        let identitySeal = ProviderIdentitySeal(masterKey: configuration.masterKey)
        let nonces = NonceStore(pool: pool)
        let issuer = SessionIssuer(sessions: sessions,
                                   keys: SigningKeyCache(apps: AppStore(pool: pool), keys: SigningKeyStore(pool: pool),
                                                          masterKey: configuration.masterKey),
                                   refreshTokenLifetimeSeconds: configuration.refreshTokenLifetimeSeconds,
                                   commandKey: SubKey.commandSession.derive(from: configuration.masterKey),
                                   hooks: AuthHookGate(client: AuthHookClient(
                                       pool: pool, seal: AuthHookSecretSeal(masterKey: configuration.masterKey),
                                       fairness: configuration.hooks)))
        let codeSettings = CodeSettings(
            codes: VerificationCodeStore(key: SubKey.verificationCode.derive(from: configuration.masterKey)),
            lifetimeSeconds: configuration.codeLifetimeSeconds,
            verificationCooldownSeconds: configuration.emailVerificationCooldownSeconds,
            mailSeal: MailPayloadSeal(masterKey: configuration.masterKey))
        // SMS-pumping protection: one policy for phone sign-in and the SMS second factor.
        let smsPolicy = SmsPolicy(settings: smsSettings,
                                  sharedCallingCodes: configuration.operatorLimits.sharedCallingCodes)
        let challenges = MfaChallengeStore(pool: pool)
        let secondFactors = SecondFactors(
            store: factorStore, totpSeal: TOTPSecretSeal(masterKey: configuration.masterKey),
            backupCodeKey: SubKey.backupCode.derive(from: configuration.masterKey),
            codes: codeSettings.codes, mailSeal: codeSettings.mailSeal, codeLifetimeSeconds: configuration.codeLifetimeSeconds,
            phones: phones, smsPolicy: smsPolicy)
        let stepUp = StepUp(sessions: sessions, factors: factorStore, users: users, hasher: hasher, pool: pool)
        // Every first factor ends here: tokens, or (MFA) a challenge first.
        let signIns = SignInOutcome(issuer: issuer, factors: factorStore, challenges: challenges,
                                    secondFactors: secondFactors,
                                    challengeKey: SubKey.challengeToken.derive(from: configuration.masterKey))
        let guests = GuestSignIn(pool: pool, users: users, outcome: signIns,
                                 secretKey: SubKey.guestSecret.derive(from: configuration.masterKey))
        let deletion = AccountDeletion(pool: pool, users: users, sessions: sessions, identities: identities, nonces: nonces,
                                       hasher: hasher, guests: guests, masterKey: configuration.masterKey,
                                       identitySeal: identitySeal, stepUp: stepUp)
        let ceremony = PasskeyCeremony(passkeys: passkeys,
                                       userHandleKey: SubKey.passkeyUserHandle.derive(from: configuration.masterKey),
                                       decoyKey: SubKey.passkeyDecoy.derive(from: configuration.masterKey),
                                       lifetimeSeconds: 300)
        let router = CommandRouter(
            guest: guests,
            deletion: deletion,
            devices: DeviceRegistration(pool: pool, devices: DeviceStore(pool: pool)),
            signUp: PasswordSignUp(pool: pool, users: users, hasher: hasher, outcome: signIns),
            signIn: PasswordSignIn(pool: pool, users: users, hasher: hasher, outcome: signIns,
                                   failures: SignInFailureAudit(pool: pool),
                                   devices: SignInDevices(store: SignInDeviceStore(pool: pool),
                                                          key: SubKey.signInDeviceToken.derive(from: configuration.masterKey))),
            profile: ProfileUpdate(pool: pool, users: users),
            emailCode: EmailCodeSignIn(pool: pool, users: users, outcome: signIns, settings: codeSettings,
                                       ownership: ownership),
            phoneCode: PhoneCodeSignIn(pool: pool, users: users, phones: phones, outcome: signIns,
                                       settings: codeSettings, policy: smsPolicy),
            recovery: PasswordRecovery(pool: pool, users: users, sessions: sessions, hasher: hasher, settings: codeSettings,
                                       ownership: ownership),
            verification: EmailVerification(pool: pool, users: users, settings: codeSettings, ownership: ownership),
            providerSignIn: ProviderSignIn(pool: pool, users: users, identities: identities, nonces: nonces,
                                           outcome: signIns, masterKey: configuration.masterKey, identitySeal: identitySeal),
            linking: IdentityLinking(pool: pool, users: users, identities: identities, nonces: nonces,
                                     masterKey: configuration.masterKey, identitySeal: identitySeal, waysIn: waysIn),
            refresh: TokenRefresh(pool: pool, users: users, sessions: sessions, issuer: issuer,
                                  successorKey: SubKey.refreshSuccessor.derive(from: configuration.masterKey),
                                  graceSeconds: configuration.refreshGraceSeconds,
                                  lifetimeSeconds: configuration.refreshTokenLifetimeSeconds),
            mfa: MfaEnrolment(pool: pool, users: users, apps: AppStore(pool: pool), factors: secondFactors, stepUp: stepUp),
            mfaVerification: MfaVerification(pool: pool, users: users, challenges: challenges, factors: secondFactors,
                                             failures: SignInFailureAudit(pool: pool),
                                             issuer: issuer),
            passkeyRegistration: PasskeyRegistration(pool: pool, users: users, ceremony: ceremony),
            passkeySignIn: PasskeySignIn(pool: pool, users: users, outcome: signIns, ceremony: ceremony),
            passkeyManagement: PasskeyManagement(pool: pool, users: users, passkeys: passkeys, waysIn: waysIn),
            sessionTokens: SessionTokenIssue(pool: pool, tokens: SessionTokenStore(pool: pool)),
            stores: FlowStores(pool: pool, users: users, sessions: sessions, codes: codeSettings, identities: identities,
                               waysIn: waysIn),
            workerName: ProcessInfo.processInfo.hostName + ":" + String(getpid()),
            authority: CallerAuthority(apps: AppStore(pool: pool), secretKeys: SecretKeyStore(pool: pool)),
            stepUp: stepUp,
            admin: AdminCommands(secretKeys: SecretKeyRotation(keys: SecretKeyStore(pool: pool)),
                                 userImport: AdminUserImport(importer: UserImport(pool: pool)),
                                 signingKeys: AdminSigningKeyRotation(keys: SigningKeyStore(pool: pool),
                                                                      masterKey: configuration.masterKey),
                                 users: UserAdministration(pool: pool, users: users, sessions: sessions, hasher: hasher,
                                                           deletion: deletion),
                                 settings: AppSettingsChange(pool: pool, masterKey: configuration.masterKey,
                                                             limits: configuration.operatorLimits),
                                 hooks: AdminAuthHooks(store: AuthHookStore(pool: pool), masterKey: configuration.masterKey),
                                 webhooks: WebhookAdministration(store: WebhookEndpointStore(pool: pool,
                                                                                             masterKey: configuration.masterKey))))
        consumer = try CommandConsumer(url: configuration.common.amqpURL,
                                       heartbeatSeconds: configuration.common.amqpHeartbeatSeconds,
                                       queue: BusTopology.tokenCommands,
                                       name: "token-worker", concurrency: configuration.concurrency,
                                       outboundWaits: configuration.hooks.limits.total,
                                       handler: { message in AuthOutcomes.record(message, router.handle(message)) })
    }

    public func start() { consumer.start() }
    public func stop() { consumer.stop() }
    public var readinessChecks: [OperationsListener.Check] { [Readiness.store(pool), Readiness.consuming(consumer)] }
}

/// The stores and settings most flows are made of. A flow may be built from these in its own
/// file, beside its handlers (`extension CommandRouter { func handle(_ command: …) }`), so a
/// new command needs its declaration in proto/ and that one file, with no wiring here.
struct FlowStores: Sendable {
    let pool: PGPool
    let users: UserStore
    let sessions: SessionStore
    let codes: CodeSettings
    let identities: IdentityStore
    /// The one "last way in" count of every removal.
    let waysIn: WaysInReader
}

/// Decodes a command by its type, runs its flow, and encodes the answer.
struct CommandRouter: Sendable {
    let guest: GuestSignIn
    let deletion: AccountDeletion
    let devices: DeviceRegistration
    let signUp: PasswordSignUp
    let signIn: PasswordSignIn
    let profile: ProfileUpdate
    let emailCode: EmailCodeSignIn
    let phoneCode: PhoneCodeSignIn
    let recovery: PasswordRecovery
    let verification: EmailVerification
    let providerSignIn: ProviderSignIn
    let linking: IdentityLinking
    let refresh: TokenRefresh
    let mfa: MfaEnrolment
    let mfaVerification: MfaVerification
    let passkeyRegistration: PasskeyRegistration
    let passkeySignIn: PasskeySignIn
    let passkeyManagement: PasskeyManagement
    let sessionTokens: SessionTokenIssue
    /// What a flow built where it is handled is made of (see `FlowStores`).
    let stores: FlowStores
    let workerName: String
    let authority: CallerAuthority
    /// The fresh proof of every command that changes a way in (`ChangesWayIn`).
    let stepUp: StepUp
    /// The admin API's commands (`identity.admin.v1`).
    let admin: AdminCommands

    func handle(_ message: BusMessage) -> CommandConsumer.Reply {
        CommandReplies.answer(message) { message in
            guard let entry = TokenCommandDispatch.table[message.type] else { return nil }
            return try entry(self, checks, message)
        }
    }

    var checks: Checks { Checks(authority: authority, stepUp: stepUp) }

    /// What every command passes before its handler: decoding, and the caller checks its type
    /// declares (generated from proto/: `ActsForUser`, `ChangesWayIn`, `ActsForAppBackend`).
    struct Checks: Sendable {
        let authority: CallerAuthority
        let stepUp: StepUp

        /// The command in `message`, of the type its entry names; a command that acts for a
        /// user (`ActsForUser`) only with that user's access token in the message, one that
        /// changes a way in (`ChangesWayIn`) only with the fresh proof its rule declares, and an
        /// admin command (`ActsForAppBackend`) only with a live secret key of its app, and a
        /// console member change (`ActsForConsoleOwner`) only with an owner's console session.
        func decode<Command: ProtoMessage>(_ message: BusMessage) throws -> Command {
            let command = try ProtoJSON.decode(Command.self, from: message.body)
            if let acting = command as? ActsForUser, !acting.actingUid.isEmpty {
                try authority.check(message, appId: acting.appId, uid: acting.actingUid, sessionId: acting.actingSessionId)
            }
            if let change = command as? ChangesWayIn, let rule = change.freshProof {
                try stepUp.check(rule, appId: change.appId, uid: change.actingUid, sessionId: change.actingSessionId)
            }
            if let backend = command as? ActsForAppBackend {
                try authority.checkAppBackend(message, appId: backend.appId)
            }
            if let owner = command as? ActsForConsoleOwner {
                try authority.checkConsoleOwner(message, appId: owner.appId, uid: owner.consoleUid)
            }
            return command
        }
    }
}
