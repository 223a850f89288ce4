import Foundation
import XCTest
@testable import IdentityCredentials
@testable import IdentityKit
import IdentityOutbound
@testable import IdentityTokenWorker

/// The token worker's parts, wired as `TokenWorker.init` wires them (TokenWorker.swift), on a
/// pool of the caller's choosing: the real test database, or one that cannot be reached (the
/// parts only connect when a flow runs). Kept in one place, so a change to the wiring is
/// followed here once.
struct WorkerParts {
    let pool: PGPool
    let masterKey: [UInt8]
    let users: UserStore
    let sessions: SessionStore
    let identities: IdentityStore
    let passkeys: PasskeyStore
    let phones: UserPhoneStore
    let factors: MfaStore
    let smsSettings: SmsSettingsStore
    let hasher: PasswordHasher
    let waysIn: WaysInReader
    let issuer: SessionIssuer
    let stepUp: StepUp
    let signIns: SignInOutcome
    let router: CommandRouter

    /// Small Argon2id parameters: the tests hash a few passwords, not many.
    static let testCost = PasswordHasher.Cost(memoryKiB: 1024, iterations: 1, parallelism: 1)

    init(pool: PGPool, masterKey: [UInt8]) throws {
        self.pool = pool
        self.masterKey = masterKey
        let users = UserStore(pool: pool)
        let hasher = try PasswordHasher(cost: Self.testCost, concurrentHashes: 2)
        let sessions = SessionStore(pool: pool)
        let identities = IdentityStore(pool: pool)
        let passkeys = PasskeyStore(pool: pool)
        let phones = UserPhoneStore()
        let factorStore = MfaStore(pool: pool)
        let ownership = EmailOwnership(users: users, sessions: sessions, identities: identities, passkeys: passkeys,
                                       phones: phones, factors: factorStore)
        let smsSettings = SmsSettingsStore(pool: pool)
        let waysIn = WaysInReader(passkeys: passkeys, phones: phones, sms: smsSettings)
        let identitySeal = ProviderIdentitySeal(masterKey: masterKey)
        let nonces = NonceStore(pool: pool)
        let issuer = SessionIssuer(sessions: sessions,
                                   keys: SigningKeyCache(apps: AppStore(pool: pool), keys: SigningKeyStore(pool: pool),
                                                         masterKey: masterKey),
                                   refreshTokenLifetimeSeconds: 3600,
                                   commandKey: SubKey.commandSession.derive(from: masterKey),
                                   hooks: AuthHookGate(client: AuthHookClient(
                                       pool: pool, seal: AuthHookSecretSeal(masterKey: masterKey),
                                       fairness: HookFairness(limits: .init()))))
        let codeSettings = CodeSettings(
            codes: VerificationCodeStore(key: SubKey.verificationCode.derive(from: masterKey)),
            lifetimeSeconds: 600, verificationCooldownSeconds: 60, mailSeal: MailPayloadSeal(masterKey: masterKey))
        let smsPolicy = SmsPolicy(settings: smsSettings, sharedCallingCodes: [])
        let challenges = MfaChallengeStore(pool: pool)
        let secondFactors = SecondFactors(
            store: factorStore, totpSeal: TOTPSecretSeal(masterKey: masterKey),
            backupCodeKey: SubKey.backupCode.derive(from: masterKey),
            codes: codeSettings.codes, mailSeal: codeSettings.mailSeal, codeLifetimeSeconds: 600,
            phones: phones, smsPolicy: smsPolicy)
        let stepUp = StepUp(sessions: sessions, factors: factorStore, users: users, hasher: hasher, pool: pool)
        let signIns = SignInOutcome(issuer: issuer, factors: factorStore, challenges: challenges,
                                    secondFactors: secondFactors,
                                    challengeKey: SubKey.challengeToken.derive(from: masterKey))
        let guests = GuestSignIn(pool: pool, users: users, outcome: signIns,
                                 secretKey: SubKey.guestSecret.derive(from: masterKey))
        let deletion = AccountDeletion(pool: pool, users: users, sessions: sessions, identities: identities, nonces: nonces,
                                       hasher: hasher, guests: guests, masterKey: masterKey,
                                       identitySeal: identitySeal, stepUp: stepUp)
        let ceremony = PasskeyCeremony(passkeys: passkeys,
                                       userHandleKey: SubKey.passkeyUserHandle.derive(from: masterKey),
                                       decoyKey: SubKey.passkeyDecoy.derive(from: masterKey),
                                       lifetimeSeconds: 300)
        router = CommandRouter(
            guest: guests,
            deletion: deletion,
            devices: DeviceRegistration(pool: pool, devices: DeviceStore(pool: pool)),
            signUp: PasswordSignUp(pool: pool, users: users, hasher: hasher, outcome: signIns),
            signIn: PasswordSignIn(pool: pool, users: users, hasher: hasher, outcome: signIns,
                                   failures: SignInFailureAudit(pool: pool),
                                   devices: SignInDevices(store: SignInDeviceStore(pool: pool),
                                                          key: SubKey.signInDeviceToken.derive(from: masterKey))),
            profile: ProfileUpdate(pool: pool, users: users),
            emailCode: EmailCodeSignIn(pool: pool, users: users, outcome: signIns, settings: codeSettings,
                                       ownership: ownership),
            phoneCode: PhoneCodeSignIn(pool: pool, users: users, phones: phones, outcome: signIns,
                                       settings: codeSettings, policy: smsPolicy),
            recovery: PasswordRecovery(pool: pool, users: users, sessions: sessions, hasher: hasher, settings: codeSettings,
                                       ownership: ownership),
            verification: EmailVerification(pool: pool, users: users, settings: codeSettings, ownership: ownership),
            providerSignIn: ProviderSignIn(pool: pool, users: users, identities: identities, nonces: nonces,
                                           outcome: signIns, masterKey: masterKey, identitySeal: identitySeal),
            linking: IdentityLinking(pool: pool, users: users, identities: identities, nonces: nonces,
                                     masterKey: masterKey, identitySeal: identitySeal, waysIn: waysIn),
            refresh: TokenRefresh(pool: pool, users: users, sessions: sessions, issuer: issuer,
                                  successorKey: SubKey.refreshSuccessor.derive(from: masterKey),
                                  graceSeconds: 30, lifetimeSeconds: 3600),
            mfa: MfaEnrolment(pool: pool, users: users, apps: AppStore(pool: pool), factors: secondFactors, stepUp: stepUp),
            mfaVerification: MfaVerification(pool: pool, users: users, challenges: challenges, factors: secondFactors,
                                             failures: SignInFailureAudit(pool: pool), issuer: issuer),
            passkeyRegistration: PasskeyRegistration(pool: pool, users: users, ceremony: ceremony),
            passkeySignIn: PasskeySignIn(pool: pool, users: users, outcome: signIns, ceremony: ceremony),
            passkeyManagement: PasskeyManagement(pool: pool, users: users, passkeys: passkeys, waysIn: waysIn),
            sessionTokens: SessionTokenIssue(pool: pool, tokens: SessionTokenStore(pool: pool)),
            stores: FlowStores(pool: pool, users: users, sessions: sessions, codes: codeSettings, identities: identities,
                               waysIn: waysIn),
            workerName: "tests:1",
            authority: CallerAuthority(apps: AppStore(pool: pool), secretKeys: SecretKeyStore(pool: pool)),
            stepUp: stepUp,
            admin: AdminCommands(secretKeys: SecretKeyRotation(keys: SecretKeyStore(pool: pool)),
                                 userImport: AdminUserImport(importer: UserImport(pool: pool)),
                                 signingKeys: AdminSigningKeyRotation(keys: SigningKeyStore(pool: pool), masterKey: masterKey),
                                 users: UserAdministration(pool: pool, users: users, sessions: sessions, hasher: hasher,
                                                           deletion: deletion),
                                 settings: AppSettingsChange(pool: pool, masterKey: masterKey, limits: OperatorLimits()),
                                 hooks: AdminAuthHooks(store: AuthHookStore(pool: pool), masterKey: masterKey),
                                 webhooks: WebhookAdministration(store: WebhookEndpointStore(pool: pool, masterKey: masterKey))))
        self.users = users
        self.sessions = sessions
        self.identities = identities
        self.passkeys = passkeys
        self.phones = phones
        self.factors = factorStore
        self.smsSettings = smsSettings
        self.hasher = hasher
        self.waysIn = waysIn
        self.issuer = issuer
        self.stepUp = stepUp
        self.signIns = signIns
    }

    /// Parts on a database that refuses every connection (nothing listens on port 1): what a
    /// flow reads fails with `StoreError.unavailable` (`auth/unavailable`), and nothing else.
    static func unreachable() throws -> WorkerParts {
        try WorkerParts(pool: PGPool(url: "postgresql://nobody@127.0.0.1:1/none?connect_timeout=2", size: 2,
                                     acquireTimeout: 2),
                        masterKey: Array(repeating: 7, count: 32))
    }

    /// A bus message of `command`'s type, with its proto3 JSON body.
    static func message<Command: ProtoMessage>(_ command: Command, appId: String = "", callerToken: String = "",
                                               messageId: String = "") throws -> BusMessage {
        var message = BusMessage(type: Command.protoName, body: try ProtoJSON.encode(command))
        message.appId = appId
        message.callerToken = callerToken
        message.messageId = messageId
        return message
    }
}

extension BusMessage {
    /// A delivered message as the consumer hands it over, with only a type and a body.
    init(type: String, body: Data) {
        self.init(type: type, body: body, correlationId: "", replyTo: "", messageId: "", appId: "", requestId: "req_test",
                  callerToken: "", deliveryTag: 0, linkGeneration: 0, redelivered: false)
    }
}

extension CommandConsumer.Reply {
    /// The error code when the reply is `identity.common.v1.Error`, else nil.
    var errorCode: String? {
        guard type == CommonV1.Error.protoName else { return nil }
        return (try? ProtoJSON.decode(CommonV1.Error.self, from: body))?.code
    }
}

/// The test database (`IDENTITY_TEST_DATABASE_URL`, as scripts/test.sh sets it for the store
/// tests), migrated, with a fresh app per test; the test is skipped without it.
final class TestDatabase {
    let parts: WorkerParts
    let app: AppRecord
    var pool: PGPool { parts.pool }

    init() throws {
        guard let url = ProcessInfo.processInfo.environment["IDENTITY_TEST_DATABASE_URL"], !url.isEmpty else {
            throw XCTSkip("IDENTITY_TEST_DATABASE_URL is unset: this test needs a PostgreSQL database")
        }
        let pool = PGPool(url: url, size: 4)
        let migrations = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("migrations")
        _ = try Migrator(pool: pool, directory: migrations).migrate()
        let masterKey = SecureRandom.bytes(32)
        parts = try WorkerParts(pool: pool, masterKey: masterKey)
        app = try AppStore(pool: pool).create(name: "Token worker tests", accessTokenTTL: 3600,
                                              publicBaseURL: "http://127.0.0.1:8080", masterKey: masterKey).app
    }

    func insertUser(email: String? = nil, emailVerified: Bool = false, password: String? = nil) throws -> UserRecord {
        var new = UserStore.NewUser(email: email, username: "u" + Identifiers.prefixed("t").suffix(12).lowercased(),
                                    firstName: nil, lastName: nil,
                                    passwordHash: try password.map { try parts.hasher.hash($0) })
        new.emailVerified = emailVerified
        return try pool.transaction { try parts.users.insert(new, appId: app.id, on: $0) }
    }

    /// The user as the store reads it now (linked providers included).
    func reload(_ user: UserRecord) throws -> UserRecord {
        try XCTUnwrap(try parts.users.find(appId: app.id, uid: user.uid))
    }

    /// A live session of `user` that began `ageSeconds` ago, at `aal`; returns its id.
    func session(for user: UserRecord, aal: Int = 1, amr: [String] = ["pwd"], ageSeconds: Int = 0) throws -> String {
        let sessionId = Identifiers.prefixed("ses")
        try pool.transaction { connection in
            try parts.sessions.create(appId: app.id, uid: user.uid, sessionId: sessionId, amr: amr, aal: aal,
                                      ip: "127.0.0.1", userAgent: "token-worker-tests",
                                      refreshTokenHash: SecureRandom.bytes(32), refreshLifetimeSeconds: 3600,
                                      commandId: nil, createdAccount: false, on: connection)
            if ageSeconds > 0 {
                try connection.query("""
                    UPDATE sessions SET created_at = now() - make_interval(secs => $3) WHERE app_id = $1 AND id = $2
                    """, [app.id, sessionId, String(ageSeconds)])
            }
        }
        return sessionId
    }

    /// Switches a TOTP second factor on for `user` (MFA on).
    func enableTOTP(for user: UserRecord) throws {
        try pool.transaction { connection in
            let sealed = try TOTPSecretSeal(masterKey: parts.masterKey).seal(SecureRandom.bytes(20), appId: app.id, uid: user.uid)
            XCTAssertTrue(try parts.factors.begin(.totp, appId: app.id, uid: user.uid, sealedSecret: sealed, on: connection))
            XCTAssertTrue(try parts.factors.acceptTOTPStep(1, appId: app.id, uid: user.uid, confirming: true, on: connection))
        }
    }

    /// An access token of `user` for `sessionId`, signed with the app's key (what the gateway forwards).
    func accessToken(for user: UserRecord, sessionId: String, aal: Int = 1) throws -> String {
        let entry = try parts.issuer.signingKey(appId: app.id)
        return try parts.issuer.result(for: user, sessionId: sessionId, refreshToken: "rt_unused",
                                       assurance: Assurance(amr: ["pwd"], aal: aal), isNewUser: false,
                                       signingKey: entry).accessToken
    }

    func linkProvider(_ provider: String, to user: UserRecord) throws {
        try pool.transaction { connection in
            try parts.identities.link(appId: app.id, uid: user.uid, provider: provider,
                                      subject: "sub-" + Identifiers.prefixed("s"), email: nil, on: connection)
        }
    }

    /// Registers a passkey (stored fields only; no ceremony); returns its id.
    @discardableResult
    func addPasskey(to user: UserRecord) throws -> String {
        let credential = PasskeyStore.NewCredential(
            credentialId: SecureRandom.bytes(16), userHandle: SecureRandom.bytes(16), publicKey: SecureRandom.bytes(65),
            algorithm: -7, signCount: 0, transports: ["internal"], backupEligible: false, backupState: false,
            aaguid: Array(repeating: 0, count: 16), attestationFormat: "none", name: "Test key")
        let record = try pool.transaction { try parts.passkeys.insert(credential, appId: app.id, uid: user.uid, on: $0) }
        return try XCTUnwrap(record).id
    }

    func setVerifiedPhone(_ phone: String, of user: UserRecord) throws {
        _ = try pool.transaction { try parts.phones.setVerified(appId: app.id, uid: user.uid, phone: phone, on: $0) }
    }

    /// The calling codes the app sends SMS to.
    func allowCallingCodes(_ codes: [Int]) throws {
        var settings = SmsSettings()
        settings.allowedCallingCodes = codes
        try parts.smsSettings.save(appId: app.id, settings, sealedAuthToken: nil)
    }
}

/// The current value of `identity_sign_ins_total{method, outcome}` in the process's registry
/// (`Metrics.shared`), read from its rendering and summed over the `app` label (one series when
/// per-app labels are off); 0 before the first count.
func signInCount(method: String, outcome: String) -> Double {
    metricValue("identity_sign_ins_total", labels: "method=\"\(method)\",outcome=\"\(outcome)\"")
}

func signUpCount(outcome: String) -> Double {
    metricValue("identity_sign_ups_total", labels: "outcome=\"\(outcome)\"")
}

/// The sum of the series of `name` whose labels begin with `labels` (then `}` or another label).
private func metricValue(_ name: String, labels: String) -> Double {
    var total = 0.0
    for line in Metrics.shared.render().split(separator: "\n") {
        for end in ["} ", ","] where line.hasPrefix(name + "{" + labels + end) {
            guard let value = line.split(separator: " ").last.flatMap({ Double($0) }) else { return -1 }
            total += value
        }
    }
    return total
}

/// The `code` of a `ServiceError` thrown by `body`, nil when it returns.
func thrownCode(_ body: () throws -> Void, file: StaticString = #filePath, line: UInt = #line) -> String? {
    do {
        try body()
        return nil
    } catch let error as ServiceError {
        return error.code
    } catch {
        XCTFail("not a ServiceError: \(error)", file: file, line: line)
        return "<\(error)>"
    }
}
