import Foundation
import XCTest
@testable import IdentityGateway
@testable import IdentityCredentials
@testable import IdentityKit

/// The gateway's verified-token cache must not outlive the key that signed a token: once the
/// key is no longer published (retired), the token is verified afresh and refused. Runs on the
/// database of `IDENTITY_TEST_DATABASE_URL` (scripts/test.sh sets it); skipped without it.
final class TokenVerifierTests: XCTestCase {
    func testACachedTokenStopsPassingWhenItsKeyIsRetired() throws {
        guard let url = ProcessInfo.processInfo.environment["IDENTITY_TEST_DATABASE_URL"], !url.isEmpty else {
            throw XCTSkip("IDENTITY_TEST_DATABASE_URL is unset")
        }
        let pool = PGPool(url: url, size: 1)
        let migrations = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("migrations")
        _ = try Migrator(pool: pool, directory: migrations).migrate()
        let masterKey = SecureRandom.bytes(32)
        let store = AppStore(pool: pool)
        let app = try store.create(name: "retire", accessTokenTTL: 3600, publicBaseURL: "http://127.0.0.1:8080",
                                   masterKey: masterKey).app
        let current = try XCTUnwrap(try store.signingKeys.signingCandidates(appId: app.id, masterKey: masterKey).last)
        let (kid, key) = (current.kid, current.key)
        let now = Timestamp.nowSeconds()
        let token = try JWT.sign(AccessTokenClaims(iss: app.issuer, aud: app.id, sub: "uid1", sid: "ses_1", iat: now,
                                                   exp: now + 600, jti: "j1", amr: ["pwd"], isGuest: false, email: nil,
                                                   emailVerified: false, roles: []), kid: kid, key: key)
        // Keys are read again on every request here (production: once a minute).
        let verifier = TokenVerifier(store: store, keyCacheSeconds: 0)
        XCTAssertEqual(try verifier.verify(authorization: "Bearer " + token, app: app).sub, "uid1")
        XCTAssertEqual(try verifier.verify(authorization: "Bearer " + token, app: app).sub, "uid1", "from the cache")

        try pool.withConnection { connection in
            _ = try connection.query("UPDATE signing_keys SET status = 'retired' WHERE app_id = $1 AND kid = $2", [app.id, kid])
        }
        XCTAssertThrowsError(try verifier.verify(authorization: "Bearer " + token, app: app)) {
            XCTAssertEqual($0 as? ServiceError, .invalidToken)
        }
    }
}
