import Foundation

extension IdentityClient {
    /// The signed-in user (`GET /v1/me`).
    public func me() async throws -> User {
        try await signedInUserAnswer(try await authorized("GET", "/v1/me"))
    }

    /// Changes the profile; fields left nil are not changed. `locale` (BCP 47) is the language
    /// of the mail and SMS the user gets.
    public func updateMe(firstName: String? = nil, lastName: String? = nil, photoURL: String? = nil,
                         username: String? = nil, locale: String? = nil) async throws -> User {
        let body: JSONObject = ["first_name": JSONValue(firstName), "last_name": JSONValue(lastName),
                                "photo_url": JSONValue(photoURL), "username": JSONValue(username),
                                "locale": JSONValue(locale)]
        return try await signedInUserAnswer(try await authorized("PATCH", "/v1/me", body: body.compacted))
    }

    /// The user's live sessions in this app; ``SessionInfo/current`` marks this one.
    public func sessions() async throws -> [SessionInfo] {
        try Transport.data([SessionInfo].self, of: try await authorized("GET", "/v1/me/sessions"))
    }

    /// Ends one session (e.g. a lost phone's). Ending the current one signs this client out.
    public func endSession(id: String) async throws {
        _ = try await authorized("DELETE", "/v1/me/sessions/\(pathSegment(id))")
        if await keeper.sessionID == id { await keeper.forget() }
    }

    /// Registers a push token for this session (unregistered when the session ends).
    public func registerDevice(token: String, platform: DevicePlatform, kind: PushKind,
                               name: String? = nil) async throws -> Device {
        let body: JSONObject = ["token": .string(token), "platform": .string(platform.rawValue),
                                "kind": .string(kind.rawValue), "device_name": JSONValue(name)]
        return try Transport.data(Device.self, of: try await authorized("POST", "/v1/me/devices", body: body.compacted))
    }

    /// The user's registered push devices.
    public func devices() async throws -> [Device] {
        try Transport.data([Device].self, of: try await authorized("GET", "/v1/me/devices"))
    }

    /// Unregisters a push device.
    public func unregisterDevice(id: String) async throws {
        _ = try await authorized("DELETE", "/v1/me/devices/\(pathSegment(id))")
    }

    /// Emails a password reset code (the same answer whether the account exists or not).
    public func forgotPassword(email: String) async throws {
        _ = try await transport.send("POST", "/v1/auth/password/forgot", body: ["email": .string(email)])
    }

    /// Whether a reset code is valid, without spending it (to move to the new-password screen).
    public func checkPasswordResetCode(email: String, code: String) async throws -> Bool {
        struct Valid: Decodable { let valid: Bool }
        let answer = try await transport.send("POST", "/v1/auth/password/verify-code",
                                              body: ["email": .string(email), "code": .string(code)])
        return try Transport.data(Valid.self, of: answer).valid
    }

    /// Sets a new password with the emailed code. Every session of the user ends, this
    /// client's too: sign in again with the new password.
    public func resetPassword(email: String, code: String, newPassword: String) async throws {
        _ = try await transport.send("POST", "/v1/auth/password/reset",
                                     body: ["email": .string(email), "code": .string(code), "password": .string(newPassword)])
    }

    /// Changes the password; the user's other sessions end, this one stays.
    public func changePassword(current: String, new: String) async throws {
        _ = try await authorized("POST", "/v1/me/password",
                                 body: ["current_password": .string(current), "new_password": .string(new)])
    }

    /// Emails a code proving the user owns their email (at most one a minute: 429 otherwise).
    public func sendEmailVerification() async throws {
        _ = try await authorized("POST", "/v1/me/email/verification")
    }

    /// Marks the email verified with the emailed code; returns the user.
    ///
    /// Signed in, the proof is sent with this session's token: the service then keeps the
    /// password, the links and this session (and ends the others). Sent without a session, it
    /// is the email-ownership rule in full: the password and links set before the proof, and
    /// every session, are gone (whoever registered the address first keeps nothing).
    public func verifyEmail(email: String, code: String) async throws -> User {
        let body: JSONObject = ["email": .string(email), "code": .string(code)]
        guard await isSignedIn else {
            return try Transport.data(User.self, of: try await transport.send("POST", "/v1/auth/email/verify", body: body))
        }
        return try await signedInUserAnswer(try await authorized("POST", "/v1/auth/email/verify", body: body))
    }

    /// Starts moving the account to a new email address: a 6-digit code is mailed to `email`;
    /// pass it to ``confirmEmailChange(code:)``. Returns how many seconds the code is
    /// valid. Nothing changes until then: the current address keeps working.
    ///
    /// Needs a fresh sign-in (less than 5 minutes ago, with the second factor when MFA is on):
    /// otherwise ``IdentityError`` `.reauthRequired`, and the user signs in again first. An
    /// address that belongs to another account gets the same answer; only the confirmation
    /// tells (`.emailAlreadyInUse`). A new start replaces the pending one.
    @discardableResult
    public func startEmailChange(to email: String) async throws -> Int {
        struct Sent: Decodable { let expires_in: Int }
        return try Transport.data(Sent.self, of: try await authorized("POST", "/v1/me/email/change",
                                                                      body: ["email": .string(email)])).expires_in
    }

    /// Confirms the pending change with the code mailed to the new address; returns the user,
    /// whose email is now that address, verified. The user's other sessions end, this one stays. Throws
    /// ``IdentityError`` `.invalidCode` for a wrong or spent code, `.emailAlreadyInUse` when the
    /// address belongs to another account.
    public func confirmEmailChange(code: String) async throws -> User {
        try await signedInUserAnswer(try await authorized("POST", "/v1/me/email/change/confirm",
                                                          body: ["code": .string(code)]))
    }

    /// Links Google to the signed-in account.
    public func linkGoogle(idToken: String, nonce: String? = nil) async throws -> User {
        let body: JSONObject = ["id_token": .string(idToken), "nonce": JSONValue(nonce)]
        return try await signedInUserAnswer(try await authorized("POST", "/v1/me/identities/google", body: body.compacted))
    }

    /// Links Apple to the signed-in account (same values as ``signInWithApple(identityToken:authorizationCode:nonce:firstName:lastName:upgradeGuest:)``).
    public func linkApple(identityToken: String, authorizationCode: String? = nil, nonce: String) async throws -> User {
        let body: JSONObject = ["identity_token": .string(identityToken), "authorization_code": JSONValue(authorizationCode),
                                "nonce": .string(nonce)]
        return try await signedInUserAnswer(try await authorized("POST", "/v1/me/identities/apple", body: body.compacted))
    }

    /// Unlinks a provider (`google`, `apple`, ...); never the last way to sign in (`.lastSignInMethod`).
    public func unlink(provider: String) async throws {
        _ = try await authorized("DELETE", "/v1/me/identities/\(pathSegment(provider))")
    }

    /// Deletes the account and all its data, with fresh proof of the account's own sign-in
    /// method. Throws ``IdentityError`` `.reauthRequired` (nothing deleted) when the proof is
    /// wrong, too old or for another account. On success the client is signed out.
    public func deleteAccount(proof: DeletionProof) async throws {
        let body: JSONObject
        switch proof {
        case .password(let password): body = ["password": .string(password)]
        case .guestSecret(let secret): body = ["secret": .string(secret)]
        case .storedGuestSecret:
            guard let secret = try await storage.read(TokenStorageKey.guestSecret) else {
                throw IdentityError(status: 0, code: .reauthRequired, detail: "no guest secret stored")
            }
            body = ["secret": .string(secret)]
        case .google(let idToken): body = ["id_token": .string(idToken)]
        case .apple(let identityToken, let authorizationCode, let nonce):
            body = ["identity_token": .string(identityToken), "authorization_code": .string(authorizationCode),
                    "nonce": .string(nonce)]
        case .recentSignIn: body = [:]
        }
        _ = try await authorized("DELETE", "/v1/me", body: body)
        switch proof {
        case .storedGuestSecret, .guestSecret: try await storage.delete(TokenStorageKey.guestSecret)
        default: break
        }
        await keeper.forget()
    }

    /// The signed-in user an answer carries, kept as ``currentUser``.
    func signedInUserAnswer(_ answer: Transport.Answer) async throws -> User {
        let user = try Transport.data(User.self, of: answer)
        await keeper.remember(user)
        return user
    }

    /// An id as one path segment (ids are opaque: never let one add a `/` or `?`).
    func pathSegment(_ id: String) -> String {
        id.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-_.~"))) ?? id
    }
}
