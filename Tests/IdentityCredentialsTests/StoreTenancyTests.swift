import Foundation
import XCTest
@testable import IdentityCredentials
@testable import IdentityKit

/// Tenant isolation of every store query that takes an app id: a row of app A is neither seen
/// nor changed through app B's id, and what is unique is unique per app. Runs against the
/// PostgreSQL database named by `IDENTITY_TEST_DATABASE_URL` (scripts/test.sh creates a fresh
/// `identity_store_test`); skipped when the variable is unset. Each test migrates the database
/// (a no-op after the first) and creates two fresh apps, so tests share no rows.
final class StoreTenancyTests: XCTestCase {
    private var pool: PGPool!
    private var masterKey: [UInt8] = []
    private var appA: AppRecord!
    private var appB: AppRecord!

    private var users: UserStore { UserStore(pool: pool) }
    private var sessions: SessionStore { SessionStore(pool: pool) }

    override func setUpWithError() throws {
        guard let url = ProcessInfo.processInfo.environment["IDENTITY_TEST_DATABASE_URL"], !url.isEmpty else {
            throw XCTSkip("IDENTITY_TEST_DATABASE_URL is unset: store tenancy tests need a PostgreSQL database")
        }
        pool = PGPool(url: url, size: 2)
        let migrations = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("migrations")
        _ = try Migrator(pool: pool, directory: migrations).migrate()
        masterKey = SecureRandom.bytes(32)
        let apps = AppStore(pool: pool)
        appA = try apps.create(name: "Tenant A", accessTokenTTL: 3600, publicBaseURL: "http://127.0.0.1:8080",
                               masterKey: masterKey).app
        appB = try apps.create(name: "Tenant B", accessTokenTTL: 3600, publicBaseURL: "http://127.0.0.1:8080",
                               masterKey: masterKey).app
    }

    override func tearDown() {
        pool = nil
        super.tearDown()
    }

    // MARK: AppStore

    func testAppKeysAndSigningKeysBelongToTheirApp() throws {
        let apps = AppStore(pool: pool)
        XCTAssertNotEqual(appA.appKey, appB.appKey)
        XCTAssertEqual(try apps.find(appKey: appA.appKey), appA)
        XCTAssertEqual(try apps.find(appKey: appB.appKey), appB)
        XCTAssertEqual(try apps.find(id: appA.id), appA)
        XCTAssertEqual(try apps.find(id: appB.id), appB)
        XCTAssertNil(try apps.find(appKey: "ak_unknown"))

        let keysA = try apps.signingKeys.published(appId: appA.id)
        let keysB = try apps.signingKeys.published(appId: appB.id)
        XCTAssertEqual(keysA.count, 1, "app A sees only its own key")
        XCTAssertEqual(keysB.count, 1, "app B sees only its own key")
        XCTAssertTrue(Set(keysA.map(\.kid)).isDisjoint(with: keysB.map(\.kid)))
        XCTAssertNotEqual(keysA.first?.publicPEM, keysB.first?.publicPEM)
        XCTAssertEqual(try apps.signingKeys.published(appId: "app_unknown").count, 0)

        let currentA = try XCTUnwrap(try apps.signingKeys.signingCandidates(appId: appA.id, masterKey: masterKey).last)
        let currentB = try XCTUnwrap(try apps.signingKeys.signingCandidates(appId: appB.id, masterKey: masterKey).last)
        XCTAssertEqual(currentA.kid, keysA.first?.kid)
        XCTAssertEqual(currentB.kid, keysB.first?.kid)
        XCTAssertEqual(try currentA.key.publicKeyPEM(), keysA.first?.publicPEM)
        XCTAssertEqual(try currentB.key.publicKeyPEM(), keysB.first?.publicPEM)
    }

    // MARK: UserStore

    func testSameEmailAndUsernameAreAllowedInTwoAppsButUniqueWithinOne() throws {
        let a = try insertUser(appA, email: "Jane@Example.com", username: "jane")
        let b = try insertUser(appB, email: "jane@example.com", username: "JANE")
        XCTAssertNotEqual(a.uid, b.uid)
        XCTAssertEqual(a.appId, appA.id)
        XCTAssertEqual(b.appId, appB.id)

        // Still unique (case-insensitively) inside one app.
        XCTAssertThrowsError(try insertUser(appA, email: "JANE@example.com", username: "other")) {
            XCTAssertEqual($0 as? UserStore.Conflict, .email)
        }
        XCTAssertThrowsError(try insertUser(appB, email: "other@example.com", username: "Jane")) {
            XCTAssertEqual($0 as? UserStore.Conflict, .username)
        }

        // A username taken only in B may be chosen in A.
        _ = try insertUser(appB, email: "bob@example.com", username: "bob")
        let renamed = try users.updateProfile(appId: appA.id, uid: a.uid, set: [.username: "Bob"], clear: [])
        XCTAssertEqual(renamed?.username, "Bob")
    }

    func testUserOfOneAppIsNotFoundThroughAnother() throws {
        let a = try insertUser(appA, email: "ann@example.com", username: "ann")

        XCTAssertNil(try users.find(appId: appB.id, uid: a.uid))
        XCTAssertEqual(try users.find(appId: appA.id, uid: a.uid)?.uid, a.uid)
        XCTAssertNil(try users.find(appId: appB.id, identifier: "ann@example.com"))
        XCTAssertNil(try users.find(appId: appB.id, identifier: "ANN"))
        XCTAssertEqual(try users.find(appId: appA.id, identifier: "ANN@example.com")?.uid, a.uid)
        XCTAssertEqual(try users.find(appId: appA.id, identifier: "Ann")?.uid, a.uid)
        try pool.transaction { connection in
            XCTAssertNil(try users.find(appId: appB.id, uid: a.uid, on: connection))
            XCTAssertEqual(try users.find(appId: appA.id, uid: a.uid, on: connection)?.uid, a.uid)
            XCTAssertNil(try users.find(appId: appB.id, email: "ann@example.com", on: connection))
            XCTAssertEqual(try users.find(appId: appA.id, email: "Ann@Example.com", on: connection)?.uid, a.uid)
            XCTAssertFalse(try users.lock(appId: appB.id, uid: a.uid, on: connection))
            XCTAssertTrue(try users.lock(appId: appA.id, uid: a.uid, on: connection))
        }

        // With the same email and username in both apps, each app finds its own user.
        let b = try insertUser(appB, email: "ANN@example.com", username: "Ann")
        XCTAssertEqual(try users.find(appId: appB.id, identifier: "ann@example.com")?.uid, b.uid)
        XCTAssertEqual(try users.find(appId: appA.id, identifier: "ann@example.com")?.uid, a.uid)
        XCTAssertEqual(try users.find(appId: appB.id, identifier: "ann")?.uid, b.uid)
        XCTAssertEqual(try users.find(appId: appA.id, identifier: "ann")?.uid, a.uid)
        try pool.transaction { connection in
            XCTAssertEqual(try users.find(appId: appB.id, email: "ann@example.com", on: connection)?.uid, b.uid)
            XCTAssertEqual(try users.find(appId: appA.id, email: "ann@example.com", on: connection)?.uid, a.uid)
        }
    }

    func testUserWritesThroughAnotherAppChangeNothing() throws {
        var new = UserStore.NewUser(email: "carl@example.com", username: "carl", firstName: "Carl", lastName: "Smith",
                                    passwordHash: "hash-a")
        new.emailVerified = false
        let a = try pool.transaction { try users.insert(new, appId: appA.id, on: $0) }

        XCTAssertNil(try users.updateProfile(appId: appB.id, uid: a.uid, set: [.firstName: "Mallory", .username: "mallory"],
                                             clear: [.lastName]))
        try pool.transaction { connection in
            try users.markEmailVerified(appId: appB.id, uid: a.uid, on: connection)
            try users.setPassword(appId: appB.id, uid: a.uid, hash: "hash-b", on: connection)
            XCTAssertNil(try users.fillMissing(appId: appB.id, uid: a.uid, firstName: "M", lastName: "M",
                                               photoURL: "https://evil.example/p.png", phone: "+15550000",
                                               on: connection))
            try users.delete(appId: appB.id, uid: a.uid, on: connection)
        }

        let after = try XCTUnwrap(try users.find(appId: appA.id, uid: a.uid), "B's delete removed A's user")
        XCTAssertEqual(after.firstName, "Carl")
        XCTAssertEqual(after.lastName, "Smith")
        XCTAssertEqual(after.username, "carl")
        XCTAssertEqual(after.passwordHash, "hash-a")
        XCTAssertFalse(after.emailVerified)
        XCTAssertNil(after.photoURL)
        XCTAssertNil(after.phone)
        XCTAssertNil(try users.find(appId: appA.id, identifier: "mallory"))

        // The same calls with A's id do change the row (the assertions above are not vacuous).
        XCTAssertEqual(try users.updateProfile(appId: appA.id, uid: a.uid, set: [.firstName: "Carla"], clear: [])?.firstName,
                       "Carla")
        try pool.transaction { try users.markEmailVerified(appId: appA.id, uid: a.uid, on: $0) }
        XCTAssertEqual(try users.find(appId: appA.id, uid: a.uid)?.emailVerified, true)
    }

    func testGuestsWithTheSameSecretInTwoAppsAreTwoUsers() throws {
        let hmac = SecureRandom.bytes(32)
        let (guestA, createdA) = try pool.transaction { try users.findOrCreateGuest(appId: appA.id, secretHMAC: hmac, on: $0) }
        let (guestB, createdB) = try pool.transaction { try users.findOrCreateGuest(appId: appB.id, secretHMAC: hmac, on: $0) }
        XCTAssertTrue(createdA)
        XCTAssertTrue(createdB, "app B found app A's guest by its secret")
        XCTAssertNotEqual(guestA.uid, guestB.uid)
        XCTAssertEqual(guestA.appId, appA.id)
        XCTAssertEqual(guestB.appId, appB.id)

        let (againA, createdAgainA) = try pool.transaction { try users.findOrCreateGuest(appId: appA.id, secretHMAC: hmac, on: $0) }
        let (againB, createdAgainB) = try pool.transaction { try users.findOrCreateGuest(appId: appB.id, secretHMAC: hmac, on: $0) }
        XCTAssertFalse(createdAgainA)
        XCTAssertFalse(createdAgainB)
        XCTAssertEqual(againA.uid, guestA.uid)
        XCTAssertEqual(againB.uid, guestB.uid)

        try pool.transaction { connection in
            XCTAssertTrue(try users.guestSecretMatches(appId: appA.id, uid: guestA.uid, secretHMAC: hmac, on: connection))
            XCTAssertTrue(try users.guestSecretMatches(appId: appB.id, uid: guestB.uid, secretHMAC: hmac, on: connection))
            XCTAssertFalse(try users.guestSecretMatches(appId: appB.id, uid: guestA.uid, secretHMAC: hmac, on: connection))
            XCTAssertFalse(try users.guestSecretMatches(appId: appA.id, uid: guestB.uid, secretHMAC: hmac, on: connection))
            XCTAssertNil(try users.lockGuest(appId: appB.id, uid: guestA.uid, on: connection))
            XCTAssertEqual(try users.lockGuest(appId: appA.id, uid: guestA.uid, on: connection)?.uid, guestA.uid)
        }

        // B cannot upgrade A's guest: nothing is updated, and A's guest stays a guest.
        var upgrade = UserStore.Upgrade()
        upgrade.email = "taken-over@example.com"
        upgrade.passwordHash = "hash-b"
        XCTAssertThrowsError(try pool.transaction { try users.upgradeGuest(appId: appB.id, uid: guestA.uid, upgrade, on: $0) })
        let after = try XCTUnwrap(try users.find(appId: appA.id, uid: guestA.uid))
        XCTAssertTrue(after.isGuest)
        XCTAssertNil(after.email)
        XCTAssertNil(after.passwordHash)
        XCTAssertTrue(try pool.transaction {
            try users.guestSecretMatches(appId: appA.id, uid: guestA.uid, secretHMAC: hmac, on: $0)
        })
    }

    // MARK: SessionStore

    func testSessionsOfOneAppAreInvisibleToAnother() throws {
        let a = try insertUser(appA, email: "dora@example.com", username: nil)
        let hash = SecureRandom.bytes(32)
        let sessionId = try createSession(appA, uid: a.uid, refreshHash: hash)

        XCTAssertFalse(try sessions.isLive(appId: appB.id, sessionId: sessionId, uid: a.uid))
        XCTAssertTrue(try sessions.isLive(appId: appA.id, sessionId: sessionId, uid: a.uid))
        XCTAssertEqual(try sessions.live(appId: appB.id, uid: a.uid).count, 0)
        XCTAssertEqual(try sessions.live(appId: appA.id, uid: a.uid).map(\.id), [sessionId])
        XCTAssertNil(try UserProfileStore(pool: pool).find(appId: appB.id, uid: a.uid, liveSessionId: sessionId))
        XCTAssertEqual(try UserProfileStore(pool: pool).find(appId: appA.id, uid: a.uid, liveSessionId: sessionId)?.uid, a.uid)

        try pool.transaction { connection in
            XCTAssertNil(try sessions.lockRefreshToken(appId: appB.id, hash: hash, graceSeconds: 30, on: connection))
            let state = try XCTUnwrap(try sessions.lockRefreshToken(appId: appA.id, hash: hash, graceSeconds: 30,
                                                                    on: connection))
            XCTAssertEqual(state.sessionId, sessionId)
            XCTAssertEqual(state.uid, a.uid)
            XCTAssertFalse(state.spent)
        }

        // B ends nothing of A's: neither the one session nor "all of the user's".
        try pool.transaction { connection in
            XCTAssertEqual(try sessions.end(appId: appB.id, uid: a.uid, sessionId: sessionId, reason: "signed_out",
                                            on: connection), [])
            XCTAssertEqual(try sessions.end(appId: appB.id, uid: a.uid, sessionId: nil, reason: "signed_out_everywhere",
                                            on: connection), [])
        }
        XCTAssertTrue(try sessions.isLive(appId: appA.id, sessionId: sessionId, uid: a.uid))
        XCTAssertEqual(try count("""
            SELECT count(*) AS n FROM outbox WHERE routing_key = 'session.revoked' AND app_id IN ($1, $2)
            """, [appA.id, appB.id]), 0, "a session.revoked event was written for B's end")

        // B cannot rotate A's refresh token (its successor has no session in B) nor open a session for A's user.
        let successor = SecureRandom.bytes(32)
        XCTAssertThrowsError(try pool.transaction {
            try sessions.rotate(appId: appB.id, sessionId: sessionId, spentHash: hash, successorHash: successor,
                                lifetimeSeconds: 3600, ip: "", userAgent: "", on: $0)
        })
        XCTAssertThrowsError(try createSession(appB, uid: a.uid, refreshHash: SecureRandom.bytes(32)))
        try pool.transaction { connection in
            let state = try XCTUnwrap(try sessions.lockRefreshToken(appId: appA.id, hash: hash, graceSeconds: 30,
                                                                    on: connection))
            XCTAssertFalse(state.spent)
            XCTAssertNil(try sessions.lockRefreshToken(appId: appA.id, hash: successor, graceSeconds: 30, on: connection))
        }
        XCTAssertEqual(try sessions.live(appId: appA.id, uid: a.uid).map(\.id), [sessionId])

        // A's own end does end it.
        try pool.transaction { connection in
            XCTAssertEqual(try sessions.end(appId: appA.id, uid: a.uid, sessionId: sessionId, reason: "signed_out",
                                            on: connection), [sessionId])
        }
        XCTAssertFalse(try sessions.isLive(appId: appA.id, sessionId: sessionId, uid: a.uid))
    }

    /// Refresh tokens are keyed by their hash alone (256 random bits, or an HMAC of a unique
    /// command id: no two apps ever hold the same), and every read and write still names the
    /// app: another app neither finds nor spends one, and cannot store the same hash.
    func testARefreshTokenHashResolvesOnlyInItsOwnApp() throws {
        let a = try insertUser(appA, email: "eve@example.com", username: nil)
        let b = try insertUser(appB, email: "eve@example.com", username: nil)
        let hash = SecureRandom.bytes(32)
        let sessionA = try createSession(appA, uid: a.uid, refreshHash: hash)

        try pool.transaction { connection in
            XCTAssertNil(try sessions.lockRefreshToken(appId: appB.id, hash: hash, graceSeconds: 30, on: connection))
        }
        // A rotation through B spends nothing of A's (whether it fails or changes nothing).
        try? pool.transaction { connection in
            try sessions.rotate(appId: appB.id, sessionId: sessionA, spentHash: hash, successorHash: SecureRandom.bytes(32),
                                lifetimeSeconds: 3600, ip: "", userAgent: "", on: connection)
        }
        try pool.transaction { connection in
            let stateA = try XCTUnwrap(try sessions.lockRefreshToken(appId: appA.id, hash: hash, graceSeconds: 30, on: connection))
            XCTAssertEqual(stateA.sessionId, sessionA)
            XCTAssertEqual(stateA.uid, a.uid)
            XCTAssertFalse(stateA.spent, "B's rotation spent A's token")
        }
        XCTAssertThrowsError(try createSession(appB, uid: b.uid, refreshHash: hash))
    }

    // MARK: NonceStore

    func testNoncesAreUsableAndSpendableOnlyInTheIssuingApp() throws {
        let nonces = NonceStore(pool: pool)
        let (nonce, _) = try nonces.issue(appId: appA.id, lifetimeSeconds: 300)
        let hash = Digest.sha256(nonce)

        XCTAssertFalse(try nonces.isUsable(appId: appB.id, hash: hash))
        XCTAssertFalse(try pool.transaction { try nonces.spend(appId: appB.id, hash: hash, on: $0) })
        XCTAssertTrue(try nonces.isUsable(appId: appA.id, hash: hash), "B's spend used up A's nonce")
        XCTAssertTrue(try pool.transaction { try nonces.spend(appId: appA.id, hash: hash, on: $0) })
        XCTAssertFalse(try nonces.isUsable(appId: appA.id, hash: hash))
    }

    // MARK: VerificationCodeStore

    func testVerificationCodesAreCheckedAndCountedPerApp() throws {
        let codes = VerificationCodeStore(key: SecureRandom.bytes(32))
        let email = "fay@example.com"
        let codeA = "123456", codeB = "654321", wrong = "000000"
        try pool.transaction {
            try codes.store(codeA, purpose: .emailCode, appId: appA.id, email: email, lifetimeSeconds: 600, on: $0)
        }

        try pool.transaction { connection in
            XCTAssertNil(try codes.secondsSinceLastSend(purpose: .emailCode, appId: appB.id, email: email, on: connection))
            XCTAssertNotNil(try codes.secondsSinceLastSend(purpose: .emailCode, appId: appA.id, email: email, on: connection))
        }
        // A's code is not valid in B, and B's guesses (right code with spend, then a full
        // budget of wrong ones) neither spend A's code nor count against it.
        try pool.transaction { connection in
            XCTAssertEqual(try codes.check(codeA, purpose: .emailCode, appId: appB.id, email: email, spend: true,
                                           on: connection), .invalid)
            for _ in 0..<VerificationCodeStore.maximumAttempts {
                XCTAssertEqual(try codes.check(wrong, purpose: .emailCode, appId: appB.id, email: email, spend: false,
                                               on: connection), .invalid)
            }
        }
        XCTAssertEqual(try count("""
            SELECT attempts AS n FROM verification_codes WHERE app_id = $1 AND purpose = 'email_code' AND email_lower = $2
            """, [appA.id, email]), 0)

        // B's own code for the same email does not replace A's.
        try pool.transaction {
            try codes.store(codeB, purpose: .emailCode, appId: appB.id, email: email, lifetimeSeconds: 600, on: $0)
        }
        try pool.transaction { connection in
            XCTAssertEqual(try codes.check(codeA, purpose: .emailCode, appId: appB.id, email: email, spend: false,
                                           on: connection), .invalid)   // B: 1 attempt
            for _ in 0..<(VerificationCodeStore.maximumAttempts - 2) {
                XCTAssertEqual(try codes.check(wrong, purpose: .emailCode, appId: appA.id, email: email, spend: false,
                                               on: connection), .invalid)
            }
            XCTAssertEqual(try codes.check(codeB, purpose: .emailCode, appId: appA.id, email: email, spend: false,
                                           on: connection), .invalid)   // A: 4 attempts, one left
            XCTAssertEqual(try codes.check(codeA, purpose: .emailCode, appId: appA.id, email: email, spend: true,
                                           on: connection), .valid, "A's code died of guesses made in B")
            XCTAssertEqual(try codes.check(codeB, purpose: .emailCode, appId: appB.id, email: email, spend: true,
                                           on: connection), .valid, "B's code died of guesses made in A")
        }
    }

    // MARK: PGConnection

    func testMfaFactorsBackupCodesAndChallengesArePerApp() throws {
        let a = try insertUser(appA, email: "mfa@example.com", username: "mfa")
        let mfa = MfaStore(pool: pool)
        let challenges = MfaChallengeStore(pool: pool)
        let backup = Digest.sha256("a backup code")
        let token = Digest.sha256("mfa_token")
        try pool.transaction { connection in
            XCTAssertTrue(try mfa.begin(.totp, appId: appA.id, uid: a.uid, sealedSecret: [1, 2, 3], on: connection))
            // Not confirmable, nor usable, through another app.
            XCTAssertFalse(try mfa.acceptTOTPStep(10, appId: appB.id, uid: a.uid, confirming: true, on: connection))
            XCTAssertNil(try mfa.totp(appId: appB.id, uid: a.uid, on: connection))
            XCTAssertTrue(try mfa.acceptTOTPStep(10, appId: appA.id, uid: a.uid, confirming: true, on: connection))
            // Each step once: the same or an older one finds nothing to update.
            XCTAssertFalse(try mfa.acceptTOTPStep(10, appId: appA.id, uid: a.uid, confirming: false, on: connection))
            XCTAssertFalse(try mfa.acceptTOTPStep(9, appId: appA.id, uid: a.uid, confirming: false, on: connection))
            XCTAssertEqual(try mfa.confirmedMethods(appId: appA.id, uid: a.uid, on: connection), [.totp])
            XCTAssertEqual(try mfa.confirmedMethods(appId: appB.id, uid: a.uid, on: connection), [])
            let stored = BackupCodeHash.make("abcde-fghjk", key: backup)
            try mfa.replaceBackupCodes([stored], appId: appA.id, uid: a.uid, on: connection)
            XCTAssertEqual(try mfa.unspentBackupCodes(appId: appB.id, uid: a.uid, on: connection), [])
            XCTAssertEqual(try mfa.unspentBackupCodes(appId: appA.id, uid: a.uid, on: connection), [stored])
            XCTAssertFalse(try mfa.spendBackupCode(stored.hmac, appId: appB.id, uid: a.uid, on: connection))
            XCTAssertTrue(try mfa.spendBackupCode(stored.hmac, appId: appA.id, uid: a.uid, on: connection))
            XCTAssertFalse(try mfa.spendBackupCode(stored.hmac, appId: appA.id, uid: a.uid, on: connection))
            XCTAssertEqual(try mfa.unspentBackupCodes(appId: appA.id, uid: a.uid, on: connection), [])
            _ = try challenges.create(appId: appA.id, id: "mfa_1", uid: a.uid, tokenHash: token, amr: ["pwd"],
                                      methods: ["totp", "backup_code"], createdAccount: false, ip: "", userAgent: "",
                                      commandId: nil, on: connection)
            XCTAssertNil(try challenges.lock(appId: appB.id, tokenHash: token, on: connection))
            XCTAssertEqual(try challenges.lock(appId: appA.id, tokenHash: token, on: connection)?.uid, a.uid)
            XCTAssertFalse(try mfa.removeAll(appId: appB.id, uid: a.uid, on: connection))
            XCTAssertTrue(try mfa.adminReset(appId: appA.id, uid: a.uid, on: connection))
            XCTAssertNil(try challenges.lock(appId: appA.id, tokenHash: token, on: connection))
        }
        XCTAssertFalse(try users.find(appId: appA.id, uid: a.uid)?.mfaEnabled ?? true)
    }

    /// What the ownership rule (first proof of an unverified email) removes, through app B's
    /// id: nothing of app A's user; through A's: the password, links, phone, factors and codes.
    func testTheEmailOwnershipRemovalsArePerApp() throws {
        var new = UserStore.NewUser(email: "squat@example.com", username: nil, firstName: nil, lastName: nil,
                                    passwordHash: "$argon2id$squatter")
        new.phone = "+33612345678"
        let a = try pool.transaction { try users.insert(new, appId: appA.id, on: $0) }
        let identities = IdentityStore(pool: pool)
        let phones = UserPhoneStore()
        let mfa = MfaStore(pool: pool)
        try pool.transaction { connection in
            try identities.link(appId: appA.id, uid: a.uid, provider: "google", subject: "g-" + a.uid, email: nil,
                                on: connection)
            _ = try phones.setVerified(appId: appA.id, uid: a.uid, phone: "+33612345678", on: connection)
            XCTAssertTrue(try mfa.begin(.totp, appId: appA.id, uid: a.uid, sealedSecret: [1], on: connection))
            XCTAssertTrue(try mfa.acceptTOTPStep(1, appId: appA.id, uid: a.uid, confirming: true, on: connection))
            XCTAssertTrue(try mfa.begin(.email, appId: appA.id, uid: a.uid, sealedSecret: nil, on: connection))
            try mfa.replaceBackupCodes([BackupCodeHash(salt: nil, hmac: Digest.sha256("c1")),
                                        BackupCodeHash.make("c2", key: [2])], appId: appA.id, uid: a.uid,
                                       on: connection)

            XCTAssertNil(try users.takeOverByEmailProof(appId: appB.id, uid: a.uid, on: connection))
            XCTAssertEqual(try identities.unlinkAll(appId: appB.id, uid: a.uid, on: connection), [])
            XCTAssertFalse(try phones.remove(appId: appB.id, uid: a.uid, on: connection))
            XCTAssertEqual(try mfa.remove(appId: appB.id, uid: a.uid, on: connection),
                           MfaStore.Removal(confirmedMethods: [], backupCodes: 0))
            let untouched = try XCTUnwrap(try users.find(appId: appA.id, uid: a.uid, on: connection))
            XCTAssertFalse(untouched.emailVerified)
            XCTAssertNotNil(untouched.passwordHash)
            XCTAssertEqual(untouched.identityProviders, ["google"])
            XCTAssertEqual(try phones.verified(appId: appA.id, uid: a.uid, on: connection), "+33612345678")
            XCTAssertTrue(untouched.mfaEnabled)

            XCTAssertEqual(try users.takeOverByEmailProof(appId: appA.id, uid: a.uid, on: connection),
                           UserStore.EmailProofTakeover(droppedPassword: true))
            XCTAssertNil(try users.takeOverByEmailProof(appId: appA.id, uid: a.uid, on: connection), "verified now")
            XCTAssertEqual(try identities.unlinkAll(appId: appA.id, uid: a.uid, on: connection), ["google"])
            XCTAssertTrue(try phones.remove(appId: appA.id, uid: a.uid, on: connection))
            XCTAssertFalse(try phones.remove(appId: appA.id, uid: a.uid, on: connection), "no phone left")
            // The email factor was only being enrolled: removed, but not one that was on.
            XCTAssertEqual(try mfa.remove(appId: appA.id, uid: a.uid, on: connection),
                           MfaStore.Removal(confirmedMethods: [.totp], backupCodes: 2))
            XCTAssertFalse(try mfa.isStarted(.email, appId: appA.id, uid: a.uid, on: connection))
            let after = try XCTUnwrap(try users.find(appId: appA.id, uid: a.uid, on: connection))
            XCTAssertTrue(after.emailVerified)
            XCTAssertNil(after.passwordHash)
            XCTAssertNil(after.phone)
            XCTAssertEqual(after.identityProviders, [])
            XCTAssertFalse(after.mfaEnabled)
        }
    }

    func testAParameterWithANULIsRefusedNotCut() throws {
        let email = "nul-\(Identifiers.nowULID())@example.com"
        _ = try insertUser(appA, email: email, username: nil)
        XCTAssertNotNil(try pool.transaction { try users.find(appId: appA.id, email: email, on: $0) })
        XCTAssertThrowsError(try pool.transaction { try users.find(appId: appA.id, email: email + "\u{0}junk", on: $0) }) { error in
            guard case StoreError.failed(let state, _)? = error as? StoreError else { return XCTFail("\(error)") }
            XCTAssertEqual(state, "22021")
        }
    }

    // MARK: RateLimitStore

    func testRateLimitBudgetsAreCountedPerAppAndOverriddenPerApp() throws {
        let limits = RateLimitStore(pool: pool)
        let policy = RateLimitPolicy(name: "sign_in_per_ip", count: 3, window: 60)
        let check = RateLimitStore.Check(policy, subject: "203.0.113.7")
        for remaining in [2, 1, 0] {
            let status = try XCTUnwrap(try limits.take(appId: appA.id, [check]).last)
            XCTAssertFalse(status.refused)
            XCTAssertEqual(status.remaining, remaining)
        }
        let refused = try XCTUnwrap(try limits.take(appId: appA.id, [check]).last)
        XCTAssertTrue(refused.refused)
        XCTAssertEqual(refused.retryAfter, 20, accuracy: 1, "one request comes back every 60/3 s")
        // A refused request leaves the state as it was: hammering does not push the reopening away.
        let again = try XCTUnwrap(try limits.take(appId: appA.id, [check]).last)
        XCTAssertEqual(again.retryAfter, refused.retryAfter, accuracy: 0.5)

        // Another app, same subject and name: its own budget.
        XCTAssertFalse(try XCTUnwrap(try limits.take(appId: appB.id, [check]).last).refused)
        // Another subject in the same app: its own budget.
        let other = RateLimitStore.Check(policy, subject: "203.0.113.8")
        XCTAssertFalse(try XCTUnwrap(try limits.take(appId: appA.id, [other]).last).refused)

        // B's override changes B's limit only.
        let apps = AppStore(pool: pool)
        try apps.setRateLimitOverride(appId: appB.id, name: policy.name, .limit(count: 1, window: 3600))
        let overridden = try XCTUnwrap(try limits.take(appId: appB.id, [other]).last)
        XCTAssertEqual(overridden.count, 1)
        XCTAssertEqual(overridden.window, 3600)
        XCTAssertTrue(try XCTUnwrap(try limits.take(appId: appB.id, [other]).last).refused)
        XCTAssertEqual(try apps.rateLimitOverrides(appId: appA.id), [:])
        try apps.setRateLimitOverride(appId: appB.id, name: policy.name, .off)
        XCTAssertEqual(try limits.take(appId: appB.id, [other]), [], "a limit turned off counts nothing")
        try apps.setRateLimitOverride(appId: appB.id, name: policy.name, nil)
        XCTAssertEqual(try apps.rateLimitOverrides(appId: appB.id), [:])
    }

    func testRateLimitWalkStopsAtTheFirstRefusalAndRefundsGiveBack() throws {
        let limits = RateLimitStore(pool: pool)
        let tight = RateLimitStore.Check(RateLimitPolicy(name: "code_resend_per_address", count: 1, window: 60),
                                         subject: "x")
        let loose = RateLimitStore.Check(RateLimitPolicy(name: "code_send_per_address", count: 5, window: 3600),
                                         subject: "x")
        XCTAssertEqual(try limits.take(appId: appA.id, [tight, loose]).map(\.remaining), [0, 4])
        let refused = try limits.take(appId: appA.id, [tight, loose])
        XCTAssertEqual(refused.map(\.name), ["code_resend_per_address"], "nothing after the refusing limit is taken")
        XCTAssertTrue(refused[0].refused)
        XCTAssertEqual(try limits.take(appId: appA.id, [loose]).last?.remaining, 3)

        try pool.transaction { try RateLimitStore.refund(appId: appA.id, tight, on: $0) }
        XCTAssertFalse(try XCTUnwrap(try limits.take(appId: appA.id, [tight]).last).refused)
        // Nothing of B's changed.
        XCTAssertEqual(try limits.take(appId: appB.id, [loose]).last?.remaining, 4)
    }

    func testCodeGuessesAreCountedPerAddressAcrossCodes() throws {
        let codes = VerificationCodeStore(key: SecureRandom.bytes(32))
        let email = "gil@example.com"
        try AppStore(pool: pool).setRateLimitOverride(appId: appA.id, name: "code_guess_per_address",
                                                      .limit(count: 6, window: 3600))
        for round in 0..<2 {
            let code = round == 0 ? "111111" : "222222"
            try pool.transaction {
                try codes.store(code, purpose: .emailCode, appId: appA.id, email: email, lifetimeSeconds: 600, on: $0)
            }
            try pool.transaction { connection in
                for _ in 0..<3 {
                    XCTAssertEqual(try codes.check("000000", purpose: .emailCode, appId: appA.id, email: email,
                                                   spend: false, on: connection), .invalid)
                }
            }
        }
        // Six wrong guesses over two codes: the third code, right, is refused; in B it is not.
        try pool.transaction {
            try codes.store("333333", purpose: .passwordReset, appId: appA.id, email: email, lifetimeSeconds: 600, on: $0)
            try codes.store("333333", purpose: .passwordReset, appId: appB.id, email: email, lifetimeSeconds: 600, on: $0)
        }
        try pool.transaction { connection in
            guard case .limited(let statuses) = try codes.check("333333", purpose: .passwordReset, appId: appA.id,
                                                                 email: email, spend: true, on: connection) else {
                return XCTFail("the address's budget is spent")
            }
            XCTAssertEqual(statuses.last?.name, "code_guess_per_address")
            XCTAssertEqual(try codes.check("333333", purpose: .passwordReset, appId: appB.id, email: email, spend: true,
                                           on: connection), .valid)
        }
    }

    // MARK: DeviceStore

    func testDevicesAreListedAndUnregisteredPerApp() throws {
        let devices = DeviceStore(pool: pool)
        let a = try insertUser(appA, email: "gus@example.com", username: nil)
        let b = try insertUser(appB, email: "gus@example.com", username: nil)
        let sessionA = try createSession(appA, uid: a.uid, refreshHash: SecureRandom.bytes(32))
        let sessionB = try createSession(appB, uid: b.uid, refreshHash: SecureRandom.bytes(32))
        let token = "apns-token-" + Identifiers.nowULID()
        let deviceA = try XCTUnwrap(try pool.transaction {
            try devices.register(appId: appA.id, uid: a.uid, sessionId: sessionA, token: token, platform: "ios",
                                 kind: "apns", deviceName: "A's phone", on: $0)
        })

        XCTAssertEqual(try devices.list(appId: appB.id, uid: a.uid).count, 0)
        XCTAssertEqual(try devices.list(appId: appA.id, uid: a.uid).map(\.id), [deviceA.id])
        XCTAssertFalse(try pool.transaction {
            try devices.unregister(appId: appB.id, uid: a.uid, deviceId: deviceA.id, reason: "unregistered", on: $0)
        })
        XCTAssertEqual(try devices.list(appId: appA.id, uid: a.uid).map(\.id), [deviceA.id])

        // The same push token registered in B is B's own device; A's does not move.
        let deviceB = try XCTUnwrap(try pool.transaction {
            try devices.register(appId: appB.id, uid: b.uid, sessionId: sessionB, token: token, platform: "ios",
                                 kind: "apns", deviceName: "B's phone", on: $0)
        })
        XCTAssertEqual(deviceB.appId, appB.id)
        XCTAssertNotEqual(deviceB.id, deviceA.id)
        let stillA = try XCTUnwrap(try devices.list(appId: appA.id, uid: a.uid).first)
        XCTAssertEqual(stillA.id, deviceA.id)
        XCTAssertEqual(stillA.uid, a.uid)
        XCTAssertEqual(stillA.sessionId, sessionA)
        XCTAssertEqual(stillA.deviceName, "A's phone")

        // Ending B's session (and B's "all sessions" of A's uid) unregisters only B's device.
        try pool.transaction { connection in
            XCTAssertEqual(try sessions.end(appId: appB.id, uid: b.uid, sessionId: nil, reason: "signed_out", on: connection),
                           [sessionB])
            XCTAssertEqual(try sessions.end(appId: appB.id, uid: a.uid, sessionId: nil, reason: "signed_out", on: connection),
                           [])
        }
        XCTAssertEqual(try devices.list(appId: appB.id, uid: b.uid).count, 0)
        XCTAssertEqual(try devices.list(appId: appA.id, uid: a.uid).map(\.id), [deviceA.id])

        // B cannot register a device for A's user.
        XCTAssertThrowsError(try pool.transaction {
            try devices.register(appId: appB.id, uid: a.uid, sessionId: sessionA, token: "other-" + token, platform: "ios",
                                 kind: "apns", deviceName: nil, on: $0)
        })
        XCTAssertTrue(try pool.transaction {
            try devices.unregister(appId: appA.id, uid: a.uid, deviceId: deviceA.id, reason: "unregistered", on: $0)
        })
    }

    // MARK: IdentityStore

    func testProviderIdentitiesArePerApp() throws {
        let identities = IdentityStore(pool: pool)
        let a = try insertUser(appA, email: "hal@example.com", username: nil)
        let b = try insertUser(appB, email: "hal@example.com", username: nil)
        let subject = "google-sub-" + Identifiers.nowULID()
        try pool.transaction {
            try identities.link(appId: appA.id, uid: a.uid, provider: "google", subject: subject, email: "hal@example.com",
                                on: $0)
        }

        try pool.transaction { connection in
            XCTAssertNil(try identities.owner(appId: appB.id, provider: "google", subject: subject, on: connection))
            XCTAssertEqual(try identities.owner(appId: appA.id, provider: "google", subject: subject, on: connection), a.uid)
            XCTAssertNil(try identities.identity(appId: appB.id, uid: a.uid, provider: "google", on: connection))
            XCTAssertEqual(try identities.identity(appId: appA.id, uid: a.uid, provider: "google", on: connection)?.subject,
                           subject)
            XCTAssertFalse(try identities.unlink(appId: appB.id, uid: a.uid, provider: "google", on: connection))
        }
        XCTAssertEqual(try users.find(appId: appA.id, uid: a.uid)?.identityProviders, ["google"])

        // The same provider subject may be linked in B, to B's user; it is not "taken".
        try pool.transaction {
            try identities.link(appId: appB.id, uid: b.uid, provider: "google", subject: subject, email: nil, on: $0)
        }
        // B cannot link an identity to A's user.
        XCTAssertThrowsError(try pool.transaction {
            try identities.link(appId: appB.id, uid: a.uid, provider: "firebase", subject: subject, email: nil, on: $0)
        })
        try pool.transaction { connection in
            XCTAssertEqual(try identities.owner(appId: appB.id, provider: "google", subject: subject, on: connection), b.uid)
            XCTAssertEqual(try identities.owner(appId: appA.id, provider: "google", subject: subject, on: connection), a.uid)
            XCTAssertTrue(try identities.unlink(appId: appB.id, uid: b.uid, provider: "google", on: connection))
            XCTAssertEqual(try identities.owner(appId: appA.id, provider: "google", subject: subject, on: connection), a.uid,
                           "B's unlink removed A's identity")
        }

        // B's Apple refresh token lands on B's Apple identity only.
        let appleSubject = "apple-sub-" + Identifiers.nowULID()
        try pool.transaction { connection in
            try identities.link(appId: appA.id, uid: a.uid, provider: "apple", subject: appleSubject, email: nil, on: connection)
            try identities.link(appId: appB.id, uid: b.uid, provider: "apple", subject: appleSubject, email: nil, on: connection)
        }
        XCTAssertTrue(try identities.storeAppleRefreshToken(appId: appB.id, uid: b.uid, subject: appleSubject,
                                                            clientId: "com.example.b", sealed: [1, 2, 3]))
        // Nor can B store one on A's user (nor on a user who is not the identity's).
        XCTAssertFalse(try identities.storeAppleRefreshToken(appId: appB.id, uid: a.uid, subject: appleSubject,
                                                             clientId: "com.example.b", sealed: [4, 5, 6]))
        try pool.transaction { connection in
            let linkedA = try XCTUnwrap(try identities.identity(appId: appA.id, uid: a.uid, provider: "apple", on: connection))
            XCTAssertNil(linkedA.sealedAppleRefreshToken)
            XCTAssertNil(linkedA.appleClientId)
            let linkedB = try XCTUnwrap(try identities.identity(appId: appB.id, uid: b.uid, provider: "apple", on: connection))
            XCTAssertEqual(linkedB.sealedAppleRefreshToken, [1, 2, 3])
            XCTAssertEqual(linkedB.appleClientId, "com.example.b")
        }
    }

    // MARK: Settings

    func testProviderSettingsArePerApp() throws {
        let store = ProviderSettingsStore(pool: pool)
        var settingsA = ProviderSettings()
        settingsA.googleClientIds = ["a.apps.googleusercontent.com"]
        settingsA.appleBundleIds = ["com.example.a"]
        settingsA.appleTeamId = "TEAMA"
        settingsA.applePrivateKeySealed = [9, 9, 9]
        settingsA.firebaseProjectId = "project-a"
        try store.save(appId: appA.id, settingsA)

        XCTAssertEqual(try store.settings(appId: appB.id), ProviderSettings())
        XCTAssertEqual(try store.settings(appId: appA.id), settingsA)

        var settingsB = ProviderSettings()
        settingsB.googleClientIds = ["b.apps.googleusercontent.com"]
        settingsB.firebaseProjectId = "project-b"
        try store.save(appId: appB.id, settingsB)
        XCTAssertEqual(try store.settings(appId: appA.id), settingsA, "B's save changed A's settings")
        XCTAssertEqual(try store.settings(appId: appB.id), settingsB)
    }

    func testMailSettingsArePerApp() throws {
        let store = MailSettingsStore(pool: pool)
        var settingsA = MailSettings()
        settingsA.deepLinkURL = "https://a.example/link"
        settingsA.fromName = "App A"
        settingsA.fromAddress = "no-reply@a.example"
        settingsA.templates = ["email_code": ["subject": "A code", "text": "{{code}}"]]
        try store.save(appId: appA.id, settingsA)

        XCTAssertEqual(try store.settings(appId: appB.id), MailSettings())
        XCTAssertEqual(try store.settings(appId: appA.id), settingsA)

        var settingsB = MailSettings()
        settingsB.fromName = "App B"
        settingsB.templates = ["password_reset": ["subject": "B reset"]]
        try store.save(appId: appB.id, settingsB)
        XCTAssertEqual(try store.settings(appId: appA.id), settingsA, "B's save changed A's settings")
        XCTAssertEqual(try store.settings(appId: appB.id), settingsB)
    }

    /// A requested host selects no app; several apps may request one host, one at most holds it
    /// verified, and each app's list changes only its own rows.
    func testDomainsAreRequestedPerAppAndVerifiedForOne() throws {
        let profiles = ClientProfileStore(pool: pool)
        let domains = AppDomainStore(pool: pool)
        let host = "auth-\(appA.id.suffix(8).lowercased()).example.test"
        try profiles.save(appId: appA.id, ClientProfile(), domains: .request([host]))
        try profiles.save(appId: appB.id, ClientProfile(), domains: .request([host]))
        XCTAssertNil(try profiles.appId(forHost: host), "a requested host selected an app")
        let tokenA = try XCTUnwrap(try domains.domain(appId: appA.id, host: host)?.token)
        XCTAssertNotEqual(tokenA, try domains.domain(appId: appB.id, host: host)?.token)
        XCTAssertEqual(try profiles.profile(appId: appB.id).pendingDomains, [host: try XCTUnwrap(
            try domains.domain(appId: appB.id, host: host)?.token)])

        XCTAssertTrue(try domains.markVerified(appId: appA.id, host: host))
        XCTAssertEqual(try profiles.appId(forHost: host), appA.id)
        XCTAssertThrowsError(try domains.markVerified(appId: appB.id, host: host)) { error in
            guard case StoreError.uniqueViolation = error else { return XCTFail("\(error)") }
        }
        XCTAssertThrowsError(try profiles.save(appId: appB.id, ClientProfile(), domains: .allow([host])))
        XCTAssertFalse(try domains.markVerified(appId: appB.id, host: "never.example.test"))
        // B's list no longer naming the host drops B's request only.
        try profiles.save(appId: appB.id, ClientProfile(), domains: .request([]))
        XCTAssertEqual(try profiles.appId(forHost: host), appA.id)
        XCTAssertEqual(try profiles.profile(appId: appA.id).domains, [host])
        XCTAssertEqual(try profiles.profile(appId: appA.id).pendingDomains, [:])
        // A's list naming it again keeps it verified.
        try profiles.save(appId: appA.id, ClientProfile(), domains: .request([host, "more." + host]))
        XCTAssertEqual(try profiles.appId(forHost: host), appA.id)
        XCTAssertEqual(Array(try profiles.profile(appId: appA.id).pendingDomains.keys), ["more." + host])
    }

    // MARK: DeliveryLedger

    /// Message ids are minted by the service (`mail_<ulid>`), so the ledger is keyed by message id
    /// alone; naming another app must not take over a claim or re-own the row.
    func testDeliveryClaimCannotBeTakenOverByNamingAnotherApp() throws {
        let ledger = DeliveryLedger(pool: pool)
        let messageId = "mail_" + Identifiers.nowULID()
        XCTAssertTrue(try ledger.claim(messageId: messageId, appId: appA.id))
        XCTAssertFalse(try ledger.claim(messageId: messageId, appId: appB.id))
        XCTAssertEqual(try count("SELECT count(*) AS n FROM mail_deliveries WHERE message_id = $1 AND app_id = $2",
                                 [messageId, appA.id]), 1)
        XCTAssertTrue(try ledger.claim(messageId: "mail_" + Identifiers.nowULID(), appId: appB.id))
    }

    // MARK: Helpers

    private func insertUser(_ app: AppRecord, email: String?, username: String?) throws -> UserRecord {
        let new = UserStore.NewUser(email: email, username: username, firstName: nil, lastName: nil, passwordHash: nil)
        return try pool.transaction { try users.insert(new, appId: app.id, on: $0) }
    }

    /// A live session with its first refresh token; returns the session id.
    private func createSession(_ app: AppRecord, uid: String, refreshHash: [UInt8]) throws -> String {
        let sessionId = Identifiers.prefixed("ses")
        try pool.transaction {
            try sessions.create(appId: app.id, uid: uid, sessionId: sessionId, amr: ["pwd"], aal: 1, ip: "127.0.0.1",
                                userAgent: "tenancy-tests", refreshTokenHash: refreshHash, refreshLifetimeSeconds: 3600,
                                commandId: nil, createdAccount: false, on: $0)
        }
        return sessionId
    }

    /// The `n` column of the first row (-1 when there is none).
    private func count(_ sql: String, _ parameters: [String?]) throws -> Int {
        try pool.withConnection { try $0.query(sql, parameters).first.map { try $0.int("n") } ?? -1 }
    }
}
