import Foundation

extension IdentityClient {
    /// Creates an account with email and password (201), or upgrades the signed-in guest.
    ///
    /// Throws ``IdentityError`` `.emailAlreadyInUse`, `.usernameTaken`, `.weakPassword` (with
    /// ``IdentityError/fieldErrors``), `.invalidEmail`; `.accountExists` when upgrading a guest.
    ///
    /// `locale` (BCP 47) is the language mail and SMS to the user are written in; nil: the
    /// device's preferred language (`Locale.preferredLanguages`), whose list also travels as
    /// every request's `Accept-Language`.
    public func signUp(email: String, password: String, firstName: String? = nil, lastName: String? = nil,
                       username: String? = nil, locale: String? = nil,
                       upgradeGuest: Bool = true) async throws -> SignInResult {
        try await firstFactor(.signUp(email: email, password: password, firstName: firstName, lastName: lastName,
                                      username: username, locale: locale ?? Transport.deviceLanguages.first),
                              upgradeGuest: upgradeGuest)
    }

    /// Signs in with an email or username and a password.
    ///
    /// Returns ``SignInResult/mfaRequired(_:)`` when the user has a second factor. Throws
    /// ``IdentityError`` `.invalidCredential` (unknown account or wrong password alike), `.userDisabled`.
    public func signIn(identifier: String, password: String, upgradeGuest: Bool = true) async throws -> SignInResult {
        try await firstFactor(.signIn(identifier: identifier, password: password), upgradeGuest: upgradeGuest)
    }

    /// Signs in with an email and a password (see ``signIn(identifier:password:upgradeGuest:)``).
    public func signIn(email: String, password: String, upgradeGuest: Bool = true) async throws -> SignInResult {
        try await firstFactor(.signIn(email: email, password: password), upgradeGuest: upgradeGuest)
    }

    /// Signs in as this installation's guest: the secret (256 random bits) is made once and kept
    /// in the storage, so the same guest comes back after a restart or a sign-out.
    public func signInAsGuest() async throws -> User {
        let secret = try await guestSecret()
        let answer = try await send(.guestSignIn(secret: secret))
        return try await signedInUser(answer)
    }

    /// The guest secret of this installation, made and stored on first use.
    func guestSecret() async throws -> String {
        if let secret = try await storage.read(TokenStorageKey.guestSecret) { return secret }
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let secret = Base64URL.encode(Data(bytes))
        try await storage.write(TokenStorageKey.guestSecret, value: secret)
        return secret
    }

    /// A fresh nonce for Sign in with Apple (single use, five minutes): put ``AppleNonce/sha256``
    /// in the Apple request, send ``AppleNonce/value`` with the identity token.
    public func appleNonce() async throws -> AppleNonce {
        struct Issued: Decodable {
            let nonce: String
            let expires_at: Date
        }
        let issued = try Transport.data(Issued.self, of: try await send(.nonce()))
        return AppleNonce(value: issued.nonce, sha256: NonceDigest.hex(Data(issued.nonce.utf8)),
                          expiresAt: issued.expires_at)
    }

    /// Signs in with Apple's identity token (from `ASAuthorizationAppleIDCredential`).
    ///
    /// - Parameters:
    ///   - authorizationCode: Apple's code, so the service can revoke the Apple grant when the account is deleted.
    ///   - nonce: the raw ``AppleNonce/value`` whose SHA-256 went into the Apple request.
    ///   - firstName: Apple gives the name only at the first sign-in: pass it then.
    public func signInWithApple(identityToken: String, authorizationCode: String? = nil, nonce: String,
                                firstName: String? = nil, lastName: String? = nil,
                                upgradeGuest: Bool = true) async throws -> SignInResult {
        try await firstFactor(.signInWithApple(identityToken: identityToken, nonce: nonce, authorizationCode: authorizationCode,
                                               firstName: firstName, lastName: lastName), upgradeGuest: upgradeGuest)
    }

    /// Signs in with a Google id token (Google Sign-In for iOS, Android or the web).
    public func signInWithGoogle(idToken: String, nonce: String? = nil, upgradeGuest: Bool = true) async throws -> SignInResult {
        try await firstFactor(.signInWithGoogle(idToken: idToken, nonce: nonce), upgradeGuest: upgradeGuest)
    }

    /// Signs in with a Firebase Authentication id token (`User.getIDToken()`).
    public func signInWithFirebase(idToken: String, upgradeGuest: Bool = true) async throws -> SignInResult {
        try await firstFactor(.signInWithIdToken(provider: "firebase", idToken: idToken), upgradeGuest: upgradeGuest)
    }

    /// Emails a 6-digit sign-in code (the same answer whether the account exists or not).
    public func sendEmailCode(email: String) async throws {
        _ = try await send(.sendEmailCode(email: email))
    }

    /// Signs in (creating the account if needed) with the emailed code.
    ///
    /// Throws ``IdentityError`` `.invalidCode` or `.codeExpired`.
    public func signInWithEmailCode(email: String, code: String, firstName: String? = nil, lastName: String? = nil,
                                    upgradeGuest: Bool = true) async throws -> SignInResult {
        try await firstFactor(.verifyEmailCode(email: email, code: code, firstName: firstName, lastName: lastName),
                              upgradeGuest: upgradeGuest)
    }

    /// The email and code of a sign-in link (`<deep link>?mode=sign_in&email=…&code=…`), or nil
    /// when the URL is not one.
    public static func magicLink(_ url: URL) -> (email: String, code: String)? {
        guard let items = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems,
              items.first(where: { $0.name == "mode" })?.value == "sign_in",
              let email = items.first(where: { $0.name == "email" })?.value, !email.isEmpty,
              let code = items.first(where: { $0.name == "code" })?.value, !code.isEmpty else { return nil }
        return (email, code)
    }

    /// Signs in with a sign-in link from the email (see ``magicLink(_:)``).
    public func signIn(magicLink url: URL, upgradeGuest: Bool = true) async throws -> SignInResult {
        guard let (email, code) = IdentityClient.magicLink(url) else {
            throw IdentityError(status: 0, code: .invalidCode, detail: "not a sign-in link")
        }
        return try await signInWithEmailCode(email: email, code: code, upgradeGuest: upgradeGuest)
    }

    /// Texts a 6-digit code to a phone number (E.164, or a national number with `countryCode`).
    /// Returns the verification's id and how long the code lives.
    public func sendPhoneCode(phone: String, countryCode: String? = nil) async throws -> (sessionID: String, expiresIn: Int) {
        struct Sent: Decodable {
            let session_id: String
            let expires_in: Int
        }
        let sent = try Transport.data(Sent.self, of: try await send(.sendPhoneCode(phone: phone, countryCode: countryCode)))
        return (sent.session_id, sent.expires_in)
    }

    /// Signs in with the texted code.
    public func signInWithPhoneCode(sessionID: String, code: String, upgradeGuest: Bool = true) async throws -> SignInResult {
        try await firstFactor(.verifyPhoneCode(sessionId: sessionID, code: code), upgradeGuest: upgradeGuest)
    }

    /// Finishes a sign-in that answered ``SignInResult/mfaRequired(_:)`` with a TOTP code, a
    /// backup code, or the emailed/texted code. Five wrong codes kill the challenge.
    public func verifyMFA(_ challenge: MFAChallenge, code: String) async throws -> User {
        let answer = try await send(.verifyMfa(challengeToken: challenge.challengeToken, code: code))
        return try await signedInUser(answer)
    }

    /// Ends this session at the service and forgets it here (also when the service cannot be
    /// reached: the local session is gone either way).
    public func signOut() async throws {
        do {
            _ = try await send(.signOut())
        } catch {
            await keeper.forget()
            if case IdentityClientError.notSignedIn = error { return }
            throw error
        }
        await keeper.forget()
    }

    /// Ends every session of the user in this app, this one included.
    public func signOutEverywhere() async throws {
        _ = try await send(.signOutAll())
        await keeper.forget()
    }
}
