import Foundation
import XCTest
@testable import IdentityCredentials
@testable import IdentityKit

/// The gateway's database role (migrations/0010_process_roles.sql) through the stores it uses:
/// `UserProfileStore` (the `user_profiles` view) serves it, while `UserStore`, which selects the
/// password hash, is refused by PostgreSQL (42501, insufficient privilege). Needs
/// `IDENTITY_TEST_DATABASE_URL` (the owner, who migrates) and `IDENTITY_TEST_GATEWAY_DATABASE_URL`
/// (the gateway's login to the same database); scripts/test.sh sets both. Skipped otherwise.
final class StoreRolesTests: XCTestCase {
    private var owner: PGPool!
    private var gateway: PGPool!

    override func setUpWithError() throws {
        let environment = ProcessInfo.processInfo.environment
        guard let ownerURL = environment["IDENTITY_TEST_DATABASE_URL"], !ownerURL.isEmpty,
              let gatewayURL = environment["IDENTITY_TEST_GATEWAY_DATABASE_URL"], !gatewayURL.isEmpty else {
            throw XCTSkip("IDENTITY_TEST_DATABASE_URL and IDENTITY_TEST_GATEWAY_DATABASE_URL are needed (scripts/test.sh)")
        }
        owner = PGPool(url: ownerURL, size: 1)
        gateway = PGPool(url: gatewayURL, size: 1)
        let migrations = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("migrations")
        _ = try Migrator(pool: owner, directory: migrations).migrate()
    }

    override func tearDown() {
        owner = nil
        gateway = nil
        super.tearDown()
    }

    func testTheGatewayReadsProfilesButNotUsers() throws {
        let app = try AppStore(pool: owner).create(name: "Roles", accessTokenTTL: 3600, publicBaseURL: "http://127.0.0.1:8080",
                                                   masterKey: SecureRandom.bytes(32)).app
        let new = UserStore.NewUser(email: "rita@example.com", username: nil, firstName: "Rita", lastName: nil,
                                    passwordHash: "$argon2id$v=19$m=1024,t=1,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNo")
        let sessionId = Identifiers.prefixed("ses")
        let user = try owner.transaction { connection -> UserRecord in
            let user = try UserStore(pool: owner).insert(new, appId: app.id, on: connection)
            try SessionStore(pool: owner).create(appId: app.id, uid: user.uid, sessionId: sessionId, amr: ["pwd"], aal: 1, ip: "",
                                                 userAgent: "", refreshTokenHash: SecureRandom.bytes(32),
                                                 refreshLifetimeSeconds: 3600, commandId: nil, createdAccount: false,
                                                 on: connection)
            return user
        }

        let profile = try XCTUnwrap(try UserProfileStore(pool: gateway).find(appId: app.id, uid: user.uid,
                                                                             liveSessionId: sessionId))
        XCTAssertEqual(profile.email, "rita@example.com")
        XCTAssertTrue(profile.hasPassword)
        XCTAssertEqual(profile.message.providers, ["password"])
        XCTAssertEqual(try AppStore(pool: gateway).find(id: app.id), app, "the gateway resolves apps")
        XCTAssertEqual(try AppStore(pool: gateway).signingKeys.published(appId: app.id).count, 1, "and reads public keys")

        XCTAssertThrowsError(try UserStore(pool: gateway).find(appId: app.id, uid: user.uid)) {
            guard case StoreError.failed(let state, _) = $0 else { return XCTFail("\($0)") }
            XCTAssertEqual(state, "42501", "permission denied")
        }
        XCTAssertThrowsError(try AppStore(pool: gateway).signingKeys.signingCandidates(appId: app.id, masterKey: SecureRandom.bytes(32))) {
            guard case StoreError.failed(let state, _) = $0 else { return XCTFail("\($0)") }
            XCTAssertEqual(state, "42501", "the sealed signing key is refused")
        }
    }
}
