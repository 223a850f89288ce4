import Foundation
import XCTest
import IdentityClient

/// Every sign-in method of the SDK against the real service.
final class SignInE2ETests: XCTestCase {
    /// The locale given at sign-up is the user's, in canonical case, and the profile changes it.
    func testSignUpAndProfileCarryTheLocale() async throws {
        let e2e = try E2E.environment()
        let client = e2e.client()
        let user = try await client.signUp(email: E2E.uniqueEmail("locale"), password: E2E.password, locale: "pt-br")
            .signedInUser()
        XCTAssertEqual(user.locale, "pt-BR")
        let changed = try await client.updateMe(locale: "ja")
        XCTAssertEqual(changed.locale, "ja")
        let me = try await client.me()
        XCTAssertEqual(me.locale, "ja")
    }

    func testPasswordSignUpSignInAndTheErrorsAppsMatchOn() async throws {
        let e2e = try E2E.environment()
        let client = e2e.client()
        let email = E2E.uniqueEmail("pwd")
        var states = client.authStates.makeAsyncIterator()
        let before = await states.next()
        XCTAssertEqual(before, .signedOut, "a stream starts with the present state")
        let signedUp = try await client.signUp(email: email, password: E2E.password, firstName: "Ada", lastName: "Lovelace",
                                               username: "ada\(UUID().uuidString.prefix(8).lowercased())")
        guard case .signedIn(let user, let isNew) = signedUp else { return XCTFail("\(signedUp)") }
        XCTAssertTrue(isNew)
        XCTAssertEqual(user.email, email)
        XCTAssertEqual(user.firstName, "Ada")
        XCTAssertFalse(user.isGuest)
        let first = await states.next()
        XCTAssertEqual(first, .signedIn(user))

        let again = e2e.client()
        let signedIn = try await again.signIn(email: email, password: E2E.password).signedInUser()
        XCTAssertEqual(signedIn.uid, user.uid)
        let byUsername = try await e2e.client().signIn(identifier: user.username!, password: E2E.password).signedInUser()
        XCTAssertEqual(byUsername.uid, user.uid)

        await assertIdentityError(.invalidCredential) { try await e2e.client().signIn(email: email, password: "not the password") }
        await assertIdentityError(.emailAlreadyInUse) { try await e2e.client().signUp(email: email, password: E2E.password) }
        let weak = await assertIdentityError(.weakPassword) { try await e2e.client().signUp(email: E2E.uniqueEmail("weak"), password: "short") }
        XCTAssertEqual(weak?.status, 422)
        XCTAssertEqual(weak?.fieldErrors.first?.location, "body.password")
        let invalid = await assertIdentityError(.invalidEmail) { try await e2e.client().signUp(email: "not an email", password: E2E.password) }
        XCTAssertEqual(invalid?.status, 422)
        XCTAssertEqual(invalid?.fieldErrors.first?.location, "body.email")
        XCTAssertNotNil(invalid?.requestID)

        // Ten wrong passwords per identifier per 15 minutes (the default): the next is 429 with Retry-After.
        let target = E2E.uniqueEmail("limited")
        var limited: IdentityError?
        for _ in 0..<12 where limited == nil {
            do {
                _ = try await e2e.client().signIn(email: target, password: "wrong password")
            } catch let error as IdentityError where error.code == .rateLimited {
                limited = error
            } catch let error as IdentityError {
                XCTAssertEqual(error.code, .invalidCredential)
            }
        }
        XCTAssertEqual(limited?.status, 429)
        XCTAssertGreaterThan(limited?.retryAfter ?? 0, 0)
    }

    func testGuestComesBackWithItsStoredSecretAndUpgradesKeepingItsUid() async throws {
        let e2e = try E2E.environment()
        let storage = InMemoryTokenStorage()
        let client = e2e.client(storage: storage)
        let guest = try await client.signInAsGuest()
        XCTAssertTrue(guest.isGuest)
        try await client.signOut()
        // The same installation (same storage) comes back as the same guest.
        let back = try await e2e.client(storage: storage).signInAsGuest()
        XCTAssertEqual(back.uid, guest.uid)

        let email = E2E.uniqueEmail("upgrade")
        let sameInstall = e2e.client(storage: storage)
        _ = try await sameInstall.signInAsGuest()
        let result = try await sameInstall.signUp(email: email, password: E2E.password)
        guard case .signedIn(let user, _) = result else { return XCTFail("\(result)") }
        XCTAssertEqual(user.uid, guest.uid, "the guest became the account")
        XCTAssertFalse(user.isGuest)
        XCTAssertEqual(user.email, email)
        let secret = await storage.read(TokenStorageKey.guestSecret)
        XCTAssertNil(secret, "the service forgot the guest secret; so does the client")
        let me = try await sameInstall.me()
        XCTAssertEqual(me.uid, guest.uid)
        XCTAssertFalse(me.isGuest)

        // A second guest whose upgrade names an existing account (a Google user): 409
        // account-exists, and the same call without the guest's token signs in to that account.
        let sub = "sdk-\(UUID().uuidString)"
        let googleUser = try await e2e.client().signInWithGoogle(idToken: try await googleToken(e2e, sub: sub)).signedInUser()
        let other = e2e.client()
        let otherGuest = try await other.signInAsGuest()
        let token = try await googleToken(e2e, sub: sub)
        await assertIdentityError(.accountExists) { try await other.signInWithGoogle(idToken: token) }
        let existing = try await other.signInWithGoogle(idToken: token, upgradeGuest: false).signedInUser()
        XCTAssertEqual(existing.uid, googleUser.uid)
        XCTAssertNotEqual(existing.uid, otherGuest.uid)

        // A guest deletes itself with its stored secret.
        let doomed = e2e.client()
        _ = try await doomed.signInAsGuest()
        try await doomed.deleteAccount(proof: .storedGuestSecret)
        let signedIn = await doomed.isSignedIn
        XCTAssertFalse(signedIn)
    }

    func googleToken(_ e2e: E2E, sub: String) async throws -> String {
        try await e2e.helper("google/token", ["sub": sub])["id_token"] as! String
    }

    func testAppleWithAnIssuedNonceGoogleAndFirebase() async throws {
        let e2e = try E2E.environment()
        let apple = e2e.client()
        let nonce = try await apple.appleNonce()
        XCTAssertEqual(nonce.sha256.count, 64)
        XCTAssertGreaterThan(nonce.expiresAt, Date())
        let appleSub = "sdk-apple-\(UUID().uuidString)"
        let minted = try await e2e.helper("apple/token", ["nonce": nonce.value, "sub": appleSub])
        let result = try await apple.signInWithApple(identityToken: minted["identity_token"] as! String,
                                                     authorizationCode: minted["authorization_code"] as? String,
                                                     nonce: nonce.value, firstName: "Grace", lastName: "Hopper")
        guard case .signedIn(let appleUser, let isNew) = result else { return XCTFail("\(result)") }
        XCTAssertTrue(isNew)
        XCTAssertTrue(appleUser.providers.contains("apple"), "\(appleUser.providers)")
        XCTAssertEqual(appleUser.firstName, "Grace")
        // The nonce is spent: the same token again is refused.
        await assertIdentityError(.invalidAppleToken) {
            try await e2e.client().signInWithApple(identityToken: minted["identity_token"] as! String, nonce: nonce.value)
        }

        // Deletion with fresh Apple proof: a new nonce, a new identity token of the same subject.
        let proofNonce = try await apple.appleNonce()
        let proof = try await e2e.helper("apple/token", ["nonce": proofNonce.value, "sub": appleSub])
        await assertIdentityError(.reauthRequired) {
            try await apple.deleteAccount(proof: .apple(identityToken: minted["identity_token"] as! String,
                                                        authorizationCode: minted["authorization_code"] as! String,
                                                        nonce: nonce.value))
        }
        try await apple.deleteAccount(proof: .apple(identityToken: proof["identity_token"] as! String,
                                                    authorizationCode: proof["authorization_code"] as! String,
                                                    nonce: proofNonce.value))
        let appleSignedIn = await apple.isSignedIn
        XCTAssertFalse(appleSignedIn)

        let google = e2e.client()
        let idToken = try await e2e.helper("google/token")["id_token"] as! String
        let googleUser = try await google.signInWithGoogle(idToken: idToken).signedInUser()
        XCTAssertTrue(googleUser.providers.contains("google"), "\(googleUser.providers)")
        await assertIdentityError(.invalidGoogleToken) { try await e2e.client().signInWithGoogle(idToken: idToken + "x") }

        let firebase = e2e.client()
        let firebaseToken = try await e2e.helper("firebase/token", ["email": E2E.uniqueEmail("fb")])["id_token"] as! String
        let firebaseUser = try await firebase.signInWithFirebase(idToken: firebaseToken).signedInUser()
        XCTAssertFalse(firebaseUser.isGuest)
        let me = try await firebase.me()
        XCTAssertEqual(me.uid, firebaseUser.uid)
    }

    func testEmailCodeAndSignInLink() async throws {
        let e2e = try E2E.environment()
        let email = E2E.uniqueEmail("code")
        let client = e2e.client()
        let mail = try await e2e.mailedCode(to: email) { try await client.sendEmailCode(email: email) }
        await assertIdentityError(.invalidCode) {
            try await client.signInWithEmailCode(email: email, code: mail.code == "000000" ? "111111" : "000000")
        }
        let result = try await client.signInWithEmailCode(email: email, code: mail.code, firstName: "Code")
        guard case .signedIn(let user, let isNew) = result else { return XCTFail("\(result)") }
        XCTAssertTrue(isNew)
        XCTAssertTrue(user.emailVerified)

        // The link of the next mail signs in on another installation.
        let other = e2e.client()
        let next = try await e2e.mailedCode(to: email) { try await other.sendEmailCode(email: email) }
        let link = try XCTUnwrap(next.link.flatMap(URL.init(string:)), "no sign-in link in the mail")
        XCTAssertEqual(IdentityClient.magicLink(link)?.email, email)
        let viaLink = try await other.signIn(magicLink: link).signedInUser()
        XCTAssertEqual(viaLink.uid, user.uid)

        // A passwordless account deletes itself with its fresh sign-in as the proof.
        try await other.deleteAccount(proof: .recentSignIn)
        do {
            _ = try await client.me()
            XCTFail("the deleted account's other session still answers")
        } catch is IdentityError {}
    }

    func testPhoneCode() async throws {
        let e2e = try E2E.environment()
        let client = e2e.client()
        let phone = "+336" + String(UInt32.random(in: 10_000_000...99_999_999))
        // A national number with its country, as a user types it.
        let national = "06" + phone.dropFirst(4)
        let sent = try await client.sendPhoneCode(phone: national, countryCode: "FR")
        XCTAssertEqual(sent.expiresIn, 600)
        let code = try await e2e.helper("sms/code", ["phone": phone])["code"] as! String
        await assertIdentityError(.invalidCode) {
            _ = try await client.signInWithPhoneCode(sessionID: sent.sessionID, code: code == "000000" ? "111111" : "000000")
        }
        let result = try await client.signInWithPhoneCode(sessionID: sent.sessionID, code: code)
        guard case .signedIn(let user, let isNew) = result else { return XCTFail("\(result)") }
        XCTAssertTrue(isNew)
        XCTAssertEqual(user.phone, phone)
        let me = try await client.me()
        XCTAssertEqual(me.uid, user.uid)
    }
}
