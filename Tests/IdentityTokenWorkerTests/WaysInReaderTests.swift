import XCTest
@testable import IdentityCredentials
@testable import IdentityKit
@testable import IdentityTokenWorker

/// The last way in (docs/api-contract.md, "Account"), as the token worker reads it from the store
/// (`WaysInReader`) and as the removals ask it: unlinking a provider (`IdentityLinking.unlink`)
/// and deleting a passkey (`PasskeyManagement.delete`) are refused with 409
/// `auth/last-sign-in-method` when nothing else would sign the account in.
final class WaysInReaderTests: XCTestCase {
    private var db: TestDatabase!
    private let last = ServiceError.lastSignInMethod.code

    override func setUpWithError() throws {
        db = try TestDatabase()
        try db.allowCallingCodes([33])
    }

    override func tearDown() { db = nil }

    private func ways(_ user: UserRecord) throws -> WaysIn {
        let fresh = try db.reload(user)
        return try db.pool.withConnection { try db.parts.waysIn.ways(of: fresh, on: $0) }
    }

    private func requireAnother(_ user: UserRecord) throws -> String? {
        let fresh = try db.reload(user)
        return thrownCode { try db.pool.withConnection { try db.parts.waysIn.requireAnother(fresh, on: $0) } }
    }

    private func unlink(_ provider: String, of user: UserRecord) -> String? {
        thrownCode {
            _ = try db.parts.router.linking.unlink(TokenV1.UnlinkIdentity(appId: db.app.id, uid: user.uid, provider: provider,
                                                                          sessionId: "ses_x"))
        }
    }

    private func deletePasskey(_ id: String, of user: UserRecord) -> String? {
        thrownCode {
            _ = try db.parts.router.passkeyManagement.delete(TokenV1.DeletePasskey(appId: db.app.id, uid: user.uid,
                                                                                  sessionId: "ses_x", passkeyId: id))
        }
    }

    // MARK: One way in: it is the last

    func testPasswordOnly() throws {
        let user = try db.insertUser(email: "pw@example.com", emailVerified: false, password: "correct horse battery")
        XCTAssertEqual(try ways(user), WaysIn(password: true))
        XCTAssertEqual(try requireAnother(user), last)
    }

    func testProviderOnlyCannotBeUnlinked() throws {
        let user = try db.insertUser()
        try db.linkProvider("google", to: user)
        XCTAssertEqual(try ways(user), WaysIn(providers: 1))
        XCTAssertEqual(try requireAnother(user), last)
        XCTAssertEqual(unlink("google", of: user), last)
        XCTAssertEqual(try db.reload(user).identityProviders, ["google"], "the refused unlink removed nothing")
    }

    func testPasskeyOnlyCannotBeDeleted() throws {
        let user = try db.insertUser()
        let passkey = try db.addPasskey(to: user)
        XCTAssertEqual(try ways(user), WaysIn(passkeys: 1))
        XCTAssertEqual(try requireAnother(user), last)
        XCTAssertEqual(deletePasskey(passkey, of: user), last)
        XCTAssertEqual(try db.parts.passkeys.credentials(appId: db.app.id, uid: user.uid).map(\.id), [passkey])
    }

    func testPhoneOnly() throws {
        let user = try db.insertUser()
        try db.setVerifiedPhone("+33612345678", of: user)
        XCTAssertEqual(try ways(user), WaysIn(phone: true))
        XCTAssertEqual(try requireAnother(user), last)
    }

    func testVerifiedEmailOnly() throws {
        let user = try db.insertUser(email: "mail@example.com", emailVerified: true)
        XCTAssertEqual(try ways(user), WaysIn(email: true))
        XCTAssertEqual(try requireAnother(user), last)
    }

    // MARK: What does not count

    func testAnUnverifiedEmailIsNoWayIn() throws {
        let user = try db.insertUser(email: "unverified@example.com", emailVerified: false)
        let passkey = try db.addPasskey(to: user)
        XCTAssertEqual(try ways(user), WaysIn(passkeys: 1))
        XCTAssertEqual(deletePasskey(passkey, of: user), last)
    }

    func testAPhoneTheAppNoLongerTextsIsNoWayIn() throws {
        let user = try db.insertUser()
        try db.setVerifiedPhone("+447700900123", of: user)
        let passkey = try db.addPasskey(to: user)
        XCTAssertEqual(try ways(user), WaysIn(passkeys: 1), "+44 is not among the app's calling codes")
        XCTAssertEqual(deletePasskey(passkey, of: user), last)
        try db.allowCallingCodes([33, 44])
        XCTAssertEqual(try ways(user), WaysIn(passkeys: 1, phone: true))
        XCTAssertNil(deletePasskey(passkey, of: user))
    }

    // MARK: Two ways in: one may go, then the other is the last

    func testAPasskeyMayGoWhenAPasswordStays() throws {
        let user = try db.insertUser(password: "correct horse battery")
        let passkey = try db.addPasskey(to: user)
        XCTAssertEqual(try ways(user), WaysIn(password: true, passkeys: 1))
        XCTAssertNil(try requireAnother(user))
        XCTAssertNil(deletePasskey(passkey, of: user))
        XCTAssertEqual(try db.parts.passkeys.credentials(appId: db.app.id, uid: user.uid).count, 0)
        XCTAssertEqual(try requireAnother(user), last, "the password is now the last way in")
    }

    func testOneOfTwoPasskeysMayGoNotTheSecond() throws {
        let user = try db.insertUser()
        let first = try db.addPasskey(to: user)
        let second = try db.addPasskey(to: user)
        XCTAssertNil(deletePasskey(first, of: user))
        XCTAssertEqual(deletePasskey(second, of: user), last)
    }

    func testAProviderMayGoWhenAPhoneOrAnotherProviderStays() throws {
        let user = try db.insertUser()
        try db.linkProvider("google", to: user)
        try db.linkProvider("apple", to: user)
        try db.setVerifiedPhone("+33611112222", of: user)
        XCTAssertEqual(try ways(user), WaysIn(providers: 2, phone: true))
        XCTAssertNil(unlink("google", of: user))
        XCTAssertNil(unlink("apple", of: user), "the phone stays")
        XCTAssertEqual(try ways(user), WaysIn(phone: true))
        XCTAssertEqual(try db.reload(user).identityProviders, [])
    }

    func testAProviderMayGoWhenAPasskeyStaysAndTheEmailCounts() throws {
        let user = try db.insertUser(email: "both@example.com", emailVerified: true)
        try db.linkProvider("apple", to: user)
        XCTAssertEqual(try ways(user), WaysIn(providers: 1, email: true))
        XCTAssertNil(unlink("apple", of: user), "a verified email signs in by mailed code")

        let other = try db.insertUser()
        try db.linkProvider("google", to: other)
        try db.addPasskey(to: other)
        XCTAssertNil(unlink("google", of: other))
    }

    /// What is not the user's is 404, before the last-way-in question.
    func testRemovingWhatTheUserDoesNotHaveIsNotFound() throws {
        let user = try db.insertUser()
        let passkey = try db.addPasskey(to: user)
        XCTAssertEqual(unlink("google", of: user), ServiceError.notFound.code)
        let other = try db.insertUser(password: "correct horse battery")
        XCTAssertEqual(deletePasskey(passkey, of: other), ServiceError.notFound.code)
    }
}
