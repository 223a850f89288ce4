import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The session's tokens: the access token in memory, the refresh token (and the user last known)
/// in ``TokenStorage``, and the one refresh in flight.
///
/// An actor, so the check "is a refresh already running?" and starting one are one step: calls
/// that find their access token refused or about to expire while a refresh runs wait for that
/// refresh instead of spending the refresh token a second time, and a call whose token was
/// already replaced by the time it asks just uses the new one.
actor SessionKeeper {
    private let transport: Transport
    private let storage: any TokenStorage
    private let states: AuthStateBroadcaster
    /// The device clock (a test may move it forward).
    private let clock: @Sendable () -> Date
    private(set) var accessToken: String?
    private var claims: AccessTokenClaims?
    private var expiry: AccessTokenExpiry?
    /// The uid of the signed-in guest, so its first-factor calls upgrade it (and an upgrade forgets its secret).
    private(set) var guestUID: String?
    /// The session this client is signed in with (`ses_…`), when the service said.
    private(set) var sessionID: String?
    /// The signed-in user as last seen; after a launch, read back from the storage once.
    private var user: User?
    private var userLoaded = false
    private var refreshing: Task<String, Error>?

    init(transport: Transport, storage: any TokenStorage, states: AuthStateBroadcaster,
         clock: @escaping @Sendable () -> Date) {
        self.transport = transport
        self.storage = storage
        self.states = states
        self.clock = clock
    }

    /// Keeps a sign-in's tokens and announces it.
    func keep(_ tokens: TokenResponse) async throws {
        try await storage.write(TokenStorageKey.refreshToken, value: tokens.refreshToken)
        holdAccessToken(tokens)
        sessionID = tokens.sessionId ?? claims?.sid
        if let user = tokens.user {
            if let guest = guestUID, guest == user.uid, !user.isGuest {
                // Upgraded: the service forgot the guest secret, so forget it here too.
                try await storage.delete(TokenStorageKey.guestSecret)
            }
            guestUID = user.isGuest ? user.uid : nil
            await hold(user)
            states.send(.signedIn(user))
        }
    }

    /// Forgets the session (the guest secret stays: the same guest can come back).
    func forget() async {
        let storedRefreshToken = (try? await storage.read(TokenStorageKey.refreshToken)) ?? nil
        let wasSignedIn = accessToken != nil || storedRefreshToken != nil
        accessToken = nil
        claims = nil
        expiry = nil
        guestUID = nil
        sessionID = nil
        user = nil
        userLoaded = true
        try? await storage.delete(TokenStorageKey.refreshToken)
        try? await storage.delete(TokenStorageKey.user)
        if wasSignedIn { states.send(.signedOut) } else { states.establish(.signedOut) }
    }

    /// An access token newer than `failed`: the current one if another call already refreshed,
    /// else the result of the one refresh in flight (started here if none runs).
    func freshAccessToken(replacing failed: String?) async throws -> String {
        if let accessToken, accessToken != failed, !needsRefresh { return accessToken }
        if let refreshing { return try await refreshing.value }
        let task = Task { try await self.performRefresh() }
        refreshing = task
        defer { refreshing = nil }
        return try await task.value
    }

    /// The access token to use now: the one in memory while it is more than a minute from
    /// expiry, else (and after a restart) one from the stored refresh token.
    func usableAccessToken() async throws -> String {
        guard let current = accessToken else { return try await freshAccessToken(replacing: nil) }
        if !needsRefresh { return current }
        do {
            return try await freshAccessToken(replacing: current)
        } catch where Transport.isTransportFailure(error) {
            // Offline shortly before expiry: the old token still works until it expires.
            if current == accessToken, let expiry, !expiry.isExpired(at: clock()) { return current }
            throw error
        }
    }

    /// Whether the access token in memory has expired or expires within the margin.
    private var needsRefresh: Bool {
        expiry?.needsRefresh(at: clock()) ?? false
    }

    private func holdAccessToken(_ tokens: TokenResponse) {
        accessToken = tokens.accessToken
        claims = AccessTokenClaims(token: tokens.accessToken)
        expiry = AccessTokenExpiry(claims: claims, expiresIn: tokens.expiresIn, obtainedAt: clock())
    }

    private func performRefresh() async throws -> String {
        guard let refreshToken = try await storage.read(TokenStorageKey.refreshToken) else {
            throw IdentityClientError.notSignedIn
        }
        let request = APIRequest.refreshToken(refreshToken: refreshToken)
        let answer: Transport.Answer
        do {
            do {
                answer = try await transport.send(request)
            } catch let error where Transport.isTransportFailure(error) {
                // The answer may have been lost after the service rotated the token: presenting
                // the same token again within the 30-second grace gets the same successor, so
                // one retry is safe.
                answer = try await transport.send(request)
            }
        } catch let error as IdentityError
                    where [.refreshTokenRevoked, .refreshTokenExpired, .invalidToken, .sessionExpired].contains(error.code) {
            await forget()
            throw error
        }
        let tokens = try Transport.data(TokenResponse.self, of: answer)
        try await storage.write(TokenStorageKey.refreshToken, value: tokens.refreshToken)
        holdAccessToken(tokens)
        if let session = tokens.sessionId ?? claims?.sid { sessionID = session }
        if let user = tokens.user {
            guestUID = user.isGuest ? user.uid : nil
            await remember(user)
        }
        if let user { states.establish(.signedIn(user)) }
        states.send(.refreshed)
        return tokens.accessToken
    }

    // MARK: - The user and session last known

    /// Keeps `fresh` as the signed-in user's profile, unless it is someone else's (a call that
    /// finished after a sign-out or a switch of account).
    func remember(_ fresh: User) async {
        guard accessToken != nil, user == nil || user?.uid == fresh.uid else { return }
        await hold(fresh)
    }

    /// The signed-in user, in memory and in the storage (losing the stored copy costs only the
    /// profile shown before the first call of the next launch, so a failed write is no error).
    private func hold(_ fresh: User) async {
        user = fresh
        userLoaded = true
        states.update(user: fresh)
        try? await storage.write(TokenStorageKey.user, value: StoredUser.encode(fresh))
    }

    /// The user last known: from this launch's calls, else as stored by an earlier one.
    func knownUser() async -> User? {
        if !userLoaded {
            let stored = (try? await storage.read(TokenStorageKey.user)) ?? nil
            // Only with a session: a profile written while a sign-out ran is no signed-in user.
            let session = ((try? await storage.read(TokenStorageKey.refreshToken)) ?? nil) != nil
            if !userLoaded {  // a sign-in or sign-out while reading decided already
                user = session ? stored.flatMap(StoredUser.decode) : nil
                userLoaded = true
            }
        }
        return user
    }

    /// What the access token in memory says, nil without one.
    func currentSession() -> CurrentSession? {
        guard accessToken != nil, let uid = claims?.sub ?? user?.uid else { return nil }
        return CurrentSession(userID: uid, sessionID: sessionID ?? claims?.sid,
                              accessTokenExpiresAt: expiry?.expiresAt, accessTokenIssuedAt: claims?.iat,
                              authenticationMethods: claims?.amr ?? [], assuranceLevel: claims?.aal ?? 1,
                              isGuest: claims?.isGuest ?? user?.isGuest ?? false, roles: claims?.roles ?? user?.roles ?? [])
    }

    /// Tells ``AuthStateBroadcaster`` the present state once (its first subscriber asked), from
    /// the storage: the stored user of a stored session, signed out without one. A session
    /// stored without its user (by hand, or by an older version of the client) is told by its
    /// first refresh instead: subscribing makes no request.
    func establishState() async {
        guard states.current == nil else { return }
        let known = await knownUser()
        let stored = ((try? await storage.read(TokenStorageKey.refreshToken)) ?? nil) != nil
        if !stored {
            states.establish(.signedOut)
        } else if let known {
            states.establish(.signedIn(known))
        }
    }
}

/// The user as the client keeps it in its ``TokenStorage`` between launches (dates as
/// Foundation's own number, which reads back to the same `Date`).
enum StoredUser {
    static func encode(_ user: User) throws -> String {
        String(decoding: try JSONEncoder().encode(user), as: UTF8.self)
    }

    static func decode(_ text: String) -> User? {
        try? JSONDecoder().decode(User.self, from: Data(text.utf8))
    }
}
