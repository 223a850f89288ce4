import Foundation

extension IdentityClient {
    /// The signed-in user (`GET /v1/me`).
    public func me() async throws -> User {
        try await signedInUserAnswer(try await send(.getMe()))
    }

    /// Changes the profile; fields left nil are not changed. `locale` (BCP 47) is the language
    /// of the mail and SMS the user gets.
    public func updateMe(firstName: String? = nil, lastName: String? = nil, photoURL: String? = nil,
                         username: String? = nil, locale: String? = nil) async throws -> User {
        try await signedInUserAnswer(try await send(.updateMe(firstName: firstName, lastName: lastName, photoUrl: photoURL,
                                                              username: username, locale: locale)))
    }

    /// The user's live sessions in this app; ``SessionInfo/current`` marks this one.
    public func sessions() async throws -> [SessionInfo] {
        try Transport.data([SessionInfo].self, of: try await send(.listSessions()))
    }

    /// Ends one session (e.g. a lost phone's). Ending the current one signs this client out.
    public func endSession(id: String) async throws {
        _ = try await send(.endSession(id: id))
        if await keeper.sessionID == id { await keeper.forget() }
    }

    /// Registers a push token for this session (unregistered when the session ends).
    public func registerDevice(token: String, platform: DevicePlatform, kind: PushKind,
                               name: String? = nil) async throws -> Device {
        try Transport.data(Device.self, of: try await send(.registerDevice(token: token, platform: platform.rawValue,
                                                                           kind: kind.rawValue, deviceName: name)))
    }

    /// The user's registered push devices.
    public func devices() async throws -> [Device] {
        try Transport.data([Device].self, of: try await send(.listDevices()))
    }

    /// Unregisters a push device.
    public func unregisterDevice(id: String) async throws {
        _ = try await send(.unregisterDevice(id: id))
    }

    /// Emails a password reset code (the same answer whether the account exists or not).
    public func forgotPassword(email: String) async throws {
        _ = try await send(.forgotPassword(email: email))
    }

    /// Whether a reset code is valid, without spending it (to move to the new-password screen).
    public func checkPasswordResetCode(email: String, code: String) async throws -> Bool {
        struct Valid: Decodable { let valid: Bool }
        let answer = try await send(.checkPasswordCode(email: email, code: code))
        return try Transport.data(Valid.self, of: answer).valid
    }

    /// Sets a new password with the emailed code. Every session of the user ends, this
    /// client's too: sign in again with the new password.
    public func resetPassword(email: String, code: String, newPassword: String) async throws {
        _ = try await send(.resetPassword(email: email, code: code, password: newPassword))
    }

    /// Changes the password; the user's other sessions end, this one stays.
    public func changePassword(current: String, new: String) async throws {
        _ = try await send(.changePassword(currentPassword: current, newPassword: new))
    }

    /// Emails a code proving the user owns their email (at most one a minute: 429 otherwise).
    public func sendEmailVerification() async throws {
        _ = try await send(.sendEmailVerification())
    }

    /// Marks the email verified with the emailed code; returns the user.
    ///
    /// Signed in, the proof is sent with this session's token: the service then keeps the
    /// password, the links and this session (and ends the others). Sent without a session, it
    /// is the email-ownership rule in full: the password and links set before the proof, and
    /// every session, are gone (whoever registered the address first keeps nothing).
    public func verifyEmail(email: String, code: String) async throws -> User {
        let request = APIRequest.verifyEmail(email: email, code: code)
        guard await isSignedIn else {
            return try Transport.data(User.self, of: try await send(request))
        }
        return try await signedInUserAnswer(try await send(request, signedIn: true))
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
        return try Transport.data(Sent.self, of: try await send(.startEmailChange(email: email))).expires_in
    }

    /// Confirms the pending change with the code mailed to the new address; returns the user,
    /// whose email is now that address, verified. The user's other sessions end, this one stays. Throws
    /// ``IdentityError`` `.invalidCode` for a wrong or spent code, `.emailAlreadyInUse` when the
    /// address belongs to another account.
    public func confirmEmailChange(code: String) async throws -> User {
        try await signedInUserAnswer(try await send(.confirmEmailChange(code: code)))
    }

    /// Links Google to the signed-in account.
    public func linkGoogle(idToken: String, nonce: String? = nil) async throws -> User {
        let body: JSONObject = ["id_token": .string(idToken), "nonce": JSONValue(nonce)]
        return try await signedInUserAnswer(try await send(.linkIdentity(provider: "google", body: body.compacted)))
    }

    /// Links Apple to the signed-in account (same values as ``signInWithApple(identityToken:authorizationCode:nonce:firstName:lastName:upgradeGuest:)``).
    public func linkApple(identityToken: String, authorizationCode: String? = nil, nonce: String) async throws -> User {
        let body: JSONObject = ["identity_token": .string(identityToken), "authorization_code": JSONValue(authorizationCode),
                                "nonce": .string(nonce)]
        return try await signedInUserAnswer(try await send(.linkIdentity(provider: "apple", body: body.compacted)))
    }

    /// Unlinks a provider (`google`, `apple`, ...); never the last way to sign in (`.lastSignInMethod`).
    public func unlink(provider: String) async throws {
        _ = try await send(.unlinkIdentity(provider: provider))
    }

    /// Deletes the account and all its data, with fresh proof of the account's own sign-in
    /// method. Throws ``IdentityError`` `.reauthRequired` (nothing deleted) when the proof is
    /// wrong, too old or for another account. On success the client is signed out.
    public func deleteAccount(proof: DeletionProof) async throws {
        let request: APIRequest
        switch proof {
        case .password(let password): request = .deleteMe(password: password)
        case .guestSecret(let secret): request = .deleteMe(secret: secret)
        case .storedGuestSecret:
            guard let secret = try await storage.read(TokenStorageKey.guestSecret) else {
                throw IdentityError(status: 0, code: .reauthRequired, detail: "no guest secret stored")
            }
            request = .deleteMe(secret: secret)
        case .google(let idToken): request = .deleteMe(idToken: idToken)
        case .apple(let identityToken, let authorizationCode, let nonce):
            request = .deleteMe(identityToken: identityToken, authorizationCode: authorizationCode, nonce: nonce)
        case .recentSignIn: request = .deleteMe()
        }
        _ = try await send(request)
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
}
