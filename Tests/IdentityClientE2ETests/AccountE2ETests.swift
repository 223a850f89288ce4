import Foundation
import XCTest
import IdentityClient

/// The signed-in user's account through the SDK: profile, sessions, devices, passwords, email
/// verification and change, linking, deletion.
final class AccountE2ETests: XCTestCase {
    func testProfileSessionsAndSignOuts() async throws {
        let e2e = try E2E.environment()
        let email = E2E.uniqueEmail("acct")
        let phone = e2e.client()
        let user = try await phone.signUp(email: email, password: E2E.password).signedInUser()
        let me = try await phone.me()
        XCTAssertEqual(me, user)
        let updated = try await phone.updateMe(firstName: "Renamed", photoURL: "https://example.com/p.png")
        XCTAssertEqual(updated.firstName, "Renamed")
        XCTAssertEqual(updated.photoURL, "https://example.com/p.png")
        XCTAssertEqual(updated.email, email, "fields left nil are not changed")

        let laptop = e2e.client()
        _ = try await laptop.signIn(email: email, password: E2E.password).signedInUser()
        let sessions = try await phone.sessions()
        XCTAssertEqual(sessions.count, 2)
        XCTAssertEqual(sessions.filter(\.current).count, 1)
        XCTAssertEqual(sessions.first { $0.current }?.userAgent, "IdentityClientE2ETests")
        let laptopSession = try XCTUnwrap(sessions.first { !$0.current })

        // Ending the laptop's session: the laptop's next call finds its token and then its
        // refresh token refused, and the laptop client signs out.
        let laptopStates = laptop.authStates
        try await phone.endSession(id: laptopSession.id)
        await assertIdentityError(.refreshTokenRevoked) { try await laptop.me() }
        let laptopSignedIn = await laptop.isSignedIn
        XCTAssertFalse(laptopSignedIn)
        var iterator = laptopStates.makeAsyncIterator()
        let laptopBefore = await iterator.next()
        guard case .signedIn? = laptopBefore else { return XCTFail("first state \(String(describing: laptopBefore))") }
        let laptopState = await iterator.next()
        XCTAssertEqual(laptopState, .signedOut)

        try await phone.signOut()
        let phoneSignedIn = await phone.isSignedIn
        XCTAssertFalse(phoneSignedIn)
        do {
            _ = try await phone.me()
            XCTFail("me() after sign-out")
        } catch IdentityClientError.notSignedIn {}

        let a = e2e.client(), b = e2e.client()
        _ = try await a.signIn(email: email, password: E2E.password)
        _ = try await b.signIn(email: email, password: E2E.password)
        try await a.signOutEverywhere()
        await assertIdentityError(.refreshTokenRevoked) { try await b.me() }

        // The access token for the app's own backend; ending the current session signs out.
        let c = e2e.client()
        _ = try await c.signIn(email: email, password: E2E.password)
        let jwt = try await c.accessToken()
        XCTAssertEqual(jwt.split(separator: ".").count, 3)
        let current = try await c.sessions().first { $0.current }
        try await c.endSession(id: try XCTUnwrap(current).id)
        let cSignedIn = await c.isSignedIn
        XCTAssertFalse(cSignedIn)
    }

    func testDevices() async throws {
        let e2e = try E2E.environment()
        let client = e2e.client()
        _ = try await client.signUp(email: E2E.uniqueEmail("dev"), password: E2E.password)
        let token = UUID().uuidString.replacingOccurrences(of: "-", with: "") + "00112233445566778899aabbccddeeff"
        let device = try await client.registerDevice(token: token, platform: .ios, kind: .apns, name: "Ada's iPhone")
        XCTAssertTrue(device.id.hasPrefix("dev_"), device.id)
        XCTAssertEqual(device.deviceName, "Ada's iPhone")
        let listed = try await client.devices()
        XCTAssertEqual(listed.map(\.id), [device.id])
        try await client.unregisterDevice(id: device.id)
        let after = try await client.devices()
        XCTAssertEqual(after, [])
        await assertIdentityError(.notFound) { try await client.unregisterDevice(id: device.id) }
    }

    func testPasswordResetChangeAndEmailVerification() async throws {
        let e2e = try E2E.environment()
        let email = E2E.uniqueEmail("reset")
        let client = e2e.client()
        let user = try await client.signUp(email: email, password: E2E.password).signedInUser()
        XCTAssertFalse(user.emailVerified)

        let verification = try await e2e.mailedCode(to: email) { try await client.sendEmailVerification() }
        let tooSoon = await assertIdentityError(.rateLimited) { try await client.sendEmailVerification() }
        XCTAssertGreaterThan(tooSoon?.retryAfter ?? 0, 0)
        // Signed in, the SDK sends the proof with the session's token: password and session stay.
        let verified = try await client.verifyEmail(email: email, code: verification.code)
        XCTAssertTrue(verified.emailVerified)
        _ = try await client.me()

        let other = e2e.client()
        _ = try await other.signIn(email: email, password: E2E.password)
        try await client.changePassword(current: E2E.password, new: "a second long passphrase")
        await assertIdentityError(.invalidCredential) { try await client.changePassword(current: "wrong", new: "whatever long") }
        await assertIdentityError(.refreshTokenRevoked) { try await other.me() }
        _ = try await client.me() // this session stays

        let reset = try await e2e.mailedCode(to: email) { try await e2e.client().forgotPassword(email: email) }
        let valid = try await e2e.client().checkPasswordResetCode(email: email, code: reset.code)
        XCTAssertTrue(valid)
        try await e2e.client().resetPassword(email: email, code: reset.code, newPassword: "a third long passphrase")
        await assertIdentityError(.refreshTokenRevoked) { try await client.me() }
        let again = try await e2e.client().signIn(email: email, password: "a third long passphrase").signedInUser()
        XCTAssertEqual(again.uid, user.uid)
    }

    func testEmailChange() async throws {
        let e2e = try E2E.environment()
        let old = E2E.uniqueEmail("chg-old"), new = E2E.uniqueEmail("chg-new")
        let client = e2e.client()
        let user = try await client.signUp(email: old, password: E2E.password).signedInUser()
        let other = e2e.client()
        _ = try await other.signIn(email: old, password: E2E.password)
        var lifetime = 0
        let mailed = try await e2e.mailedCode(to: new) { lifetime = try await client.startEmailChange(to: new) }
        XCTAssertGreaterThan(lifetime, 0)
        let wrong = mailed.code == "000000" ? "111111" : "000000"
        await assertIdentityError(.invalidCode) { try await client.confirmEmailChange(code: wrong) }
        let changed = try await client.confirmEmailChange(code: mailed.code)
        XCTAssertEqual(changed.uid, user.uid)
        XCTAssertEqual(changed.email, new)
        XCTAssertTrue(changed.emailVerified)
        let me = try await client.me() // this session stays
        XCTAssertEqual(me.email, new)
        await assertIdentityError(.refreshTokenRevoked) { try await other.me() }
        let again = try await e2e.client().signIn(email: new, password: E2E.password).signedInUser()
        XCTAssertEqual(again.uid, user.uid)
        await assertIdentityError(.invalidCredential) { try await e2e.client().signIn(email: old, password: E2E.password) }

        // An address of another account: refused at the confirmation only.
        let taken = E2E.uniqueEmail("chg-taken")
        _ = try await e2e.client().signUp(email: taken, password: E2E.password)
        let code = try await e2e.mailedCode(to: taken) { try await client.startEmailChange(to: taken) }.code
        await assertIdentityError(.emailAlreadyInUse) { try await client.confirmEmailChange(code: code) }
        let unchanged = try await client.me()
        XCTAssertEqual(unchanged.email, new)
    }

    func testLinkingAndDeletion() async throws {
        let e2e = try E2E.environment()
        let email = E2E.uniqueEmail("link")
        let client = e2e.client()
        let user = try await client.signUp(email: email, password: E2E.password).signedInUser()
        let sub = "sdk-link-\(UUID().uuidString)"
        let googleToken = try await e2e.helper("google/token", ["sub": sub])["id_token"] as! String
        let linked = try await client.linkGoogle(idToken: googleToken)
        XCTAssertTrue(linked.providers.contains("google"), "\(linked.providers)")
        let nonce = try await client.appleNonce()
        let apple = try await e2e.helper("apple/token", ["nonce": nonce.value])
        let withApple = try await client.linkApple(identityToken: apple["identity_token"] as! String,
                                                   authorizationCode: apple["authorization_code"] as? String, nonce: nonce.value)
        XCTAssertTrue(withApple.providers.contains("apple"), "\(withApple.providers)")
        try await client.unlink(provider: "apple")
        let afterUnlink = try await client.me()
        XCTAssertFalse(afterUnlink.providers.contains("apple"))
        // Google now signs in to the same account.
        let viaGoogle = try await e2e.client().signInWithGoogle(idToken: try await e2e.helper("google/token", ["sub": sub])["id_token"] as! String)
        XCTAssertEqual(try viaGoogle.signedInUser().uid, user.uid)

        await assertIdentityError(.reauthRequired) { try await client.deleteAccount(proof: .password("not it")) }
        _ = try await client.me() // nothing deleted
        try await client.deleteAccount(proof: .password(E2E.password))
        let signedIn = await client.isSignedIn
        XCTAssertFalse(signedIn)
        await assertIdentityError(.invalidCredential) { try await e2e.client().signIn(email: email, password: E2E.password) }

        // A Google user proves itself with a fresh Google token.
        let googleSub = "sdk-del-\(UUID().uuidString)"
        let googleClient = e2e.client()
        _ = try await googleClient.signInWithGoogle(idToken: try await e2e.helper("google/token", ["sub": googleSub])["id_token"] as! String)
        let proof = try await e2e.helper("google/token", ["sub": googleSub])["id_token"] as! String
        try await googleClient.deleteAccount(proof: .google(idToken: proof))
        do {
            _ = try await googleClient.me()
            XCTFail("me() after deletion")
        } catch IdentityClientError.notSignedIn {}
    }
}
