import Foundation
import XCTest
@testable import IdentityCredentials
@testable import IdentityKit

/// Tenant isolation of `PasskeyStore` (like StoreTenancyTests, on `IDENTITY_TEST_DATABASE_URL`):
/// app B neither finds, renames, deletes nor spends what app A holds, and a credential id is
/// unique per app, not across apps.
final class PasskeyStoreTenancyTests: XCTestCase {
    private var pool: PGPool!
    private var appA: AppRecord!
    private var appB: AppRecord!

    override func setUpWithError() throws {
        guard let url = ProcessInfo.processInfo.environment["IDENTITY_TEST_DATABASE_URL"], !url.isEmpty else {
            throw XCTSkip("IDENTITY_TEST_DATABASE_URL is unset: store tenancy tests need a PostgreSQL database")
        }
        pool = PGPool(url: url, size: 2)
        let migrations = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("migrations")
        _ = try Migrator(pool: pool, directory: migrations).migrate()
        let masterKey = SecureRandom.bytes(32)
        let apps = AppStore(pool: pool)
        appA = try apps.create(name: "Passkeys A", accessTokenTTL: 3600, publicBaseURL: "http://127.0.0.1:8080",
                               masterKey: masterKey).app
        appB = try apps.create(name: "Passkeys B", accessTokenTTL: 3600, publicBaseURL: "http://127.0.0.1:8080",
                               masterKey: masterKey).app
    }

    override func tearDown() {
        pool = nil
        super.tearDown()
    }

    private func user(_ app: AppRecord) throws -> UserRecord {
        let new = UserStore.NewUser(email: nil, username: nil, firstName: nil, lastName: nil, passwordHash: nil)
        return try pool.transaction { try UserStore(pool: pool).insert(new, appId: app.id, on: $0) }
    }

    private func credential(_ id: [UInt8]) -> PasskeyStore.NewCredential {
        PasskeyStore.NewCredential(credentialId: id, userHandle: [1], publicKey: [2], algorithm: -7, signCount: 0,
                                   transports: ["internal"], backupEligible: true, backupState: false,
                                   aaguid: Array(repeating: 0, count: 16), attestationFormat: "none", name: "Key")
    }

    func testCredentialsAndFlowsBelongToTheirApp() throws {
        let store = PasskeyStore(pool: pool)
        let alice = try user(appA)
        let bob = try user(appB)
        let credentialId = SecureRandom.bytes(16)
        let record = try XCTUnwrap(try pool.transaction {
            try store.insert(credential(credentialId), appId: appA.id, uid: alice.uid, on: $0)
        })
        // The same credential id in another app is another credential; twice in one app is refused.
        XCTAssertNotNil(try pool.transaction { try store.insert(credential(credentialId), appId: appB.id, uid: bob.uid, on: $0) })
        XCTAssertNil(try pool.transaction { try store.insert(credential(credentialId), appId: appA.id, uid: alice.uid, on: $0) })

        XCTAssertEqual(try store.credentials(appId: appB.id, uid: alice.uid).count, 0)
        XCTAssertNil(try store.rename(appId: appB.id, uid: alice.uid, id: record.id, name: "stolen"))
        XCTAssertFalse(try pool.transaction { try store.delete(appId: appB.id, uid: alice.uid, id: record.id, on: $0) })
        XCTAssertEqual(try store.credentials(appId: appA.id, uid: alice.uid).map(\.name), ["Key"])
        let lockedInB = try pool.transaction { try store.lockCredential(appId: appB.id, credentialId: credentialId, on: $0) }
        XCTAssertEqual(lockedInB?.uid, bob.uid)

        let flowId = try store.createFlow(appId: appA.id, purpose: "sign_in", uid: nil, challengeHash: [1, 2, 3],
                                          allowedCredentialIds: [], identified: false, lifetimeSeconds: 60)
        guard case .gone = try pool.transaction({ try store.spendSignIn(appId: appB.id, flowId: flowId, on: $0) }) else {
            return XCTFail("app B spent app A's flow")
        }
        guard case .spent = try pool.transaction({ try store.spendSignIn(appId: appA.id, flowId: flowId, on: $0) }) else {
            return XCTFail("app A could not spend its flow")
        }
        guard case .gone = try pool.transaction({ try store.spendSignIn(appId: appA.id, flowId: flowId, on: $0) }) else {
            return XCTFail("a flow was spent twice")
        }
    }

    /// The ownership rule's removal of every passkey (and open ceremony) of a user, and the
    /// "last way in" count: app B's id reaches none of app A's.
    func testCountAndRemovalOfAllOfAUsersPasskeysArePerApp() throws {
        let store = PasskeyStore(pool: pool)
        let alice = try user(appA)
        let first = try XCTUnwrap(try pool.transaction {
            try store.insert(credential(SecureRandom.bytes(16)), appId: appA.id, uid: alice.uid, on: $0)
        })
        let second = try XCTUnwrap(try pool.transaction {
            try store.insert(credential(SecureRandom.bytes(16)), appId: appA.id, uid: alice.uid, on: $0)
        })
        _ = try store.createFlow(appId: appA.id, purpose: "register", uid: alice.uid, challengeHash: [4, 5, 6],
                                 allowedCredentialIds: [], identified: true, lifetimeSeconds: 60)
        try pool.transaction { connection in
            XCTAssertEqual(try store.count(appId: appB.id, uid: alice.uid, on: connection), 0)
            XCTAssertEqual(try store.count(appId: appA.id, uid: alice.uid, on: connection), 2)
            XCTAssertEqual(try store.deleteAll(appId: appB.id, uid: alice.uid, on: connection), [])
            XCTAssertEqual(try store.count(appId: appA.id, uid: alice.uid, on: connection), 2, "B's removal took A's passkeys")
            XCTAssertEqual(try store.deleteAll(appId: appA.id, uid: alice.uid, on: connection), [first.id, second.id])
            XCTAssertEqual(try store.count(appId: appA.id, uid: alice.uid, on: connection), 0)
        }
        // The open registration went with them.
        guard case .gone = try pool.transaction({
            try store.spendRegistration(appId: appA.id, uid: alice.uid, challengeHash: [4, 5, 6], on: $0)
        }) else { return XCTFail("a registration begun before the removal could still finish") }
    }

    func testSettingsArePerApp() throws {
        let store = PasskeyStore(pool: pool)
        let settings = WebAuthnSettings(rpId: "a.example", origins: ["https://a.example"], requireUserVerification: true)
        try store.save(appId: appA.id, settings)
        XCTAssertNil(try store.settings(appId: appB.id))
        XCTAssertEqual(try store.settings(appId: appA.id), settings)
    }
}
