import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The session's tokens: the access token in memory, the refresh token in ``TokenStorage``, and
/// the one refresh in flight.
///
/// An actor, so the check "is a refresh already running?" and starting one are one step: calls
/// that find their access token refused while a refresh runs wait for that refresh instead of
/// spending the refresh token a second time, and a call whose token was already replaced by
/// the time it asks just retries with the new one.
actor SessionKeeper {
    private let transport: Transport
    private let storage: any TokenStorage
    private let states: AuthStateBroadcaster
    private(set) var accessToken: String?
    /// The uid of the signed-in guest, so its first-factor calls upgrade it (and an upgrade forgets its secret).
    private(set) var guestUID: String?
    /// The session this client is signed in with (`ses_…`), when the service said.
    private(set) var sessionID: String?
    private var refreshing: Task<String, Error>?

    init(transport: Transport, storage: any TokenStorage, states: AuthStateBroadcaster) {
        self.transport = transport
        self.storage = storage
        self.states = states
    }

    /// Keeps a sign-in's tokens and announces it.
    func keep(_ tokens: TokenResponse) async throws {
        try await storage.write(TokenStorageKey.refreshToken, value: tokens.refreshToken)
        accessToken = tokens.accessToken
        sessionID = tokens.sessionId
        if let user = tokens.user {
            if let guest = guestUID, guest == user.uid, !user.isGuest {
                // Upgraded: the service forgot the guest secret, so forget it here too.
                try await storage.delete(TokenStorageKey.guestSecret)
            }
            guestUID = user.isGuest ? user.uid : nil
            states.send(.signedIn(user))
        }
    }

    /// Forgets the session (the guest secret stays: the same guest can come back).
    func forget() async {
        let storedRefreshToken = (try? await storage.read(TokenStorageKey.refreshToken)) ?? nil
        let wasSignedIn = accessToken != nil || storedRefreshToken != nil
        accessToken = nil
        guestUID = nil
        sessionID = nil
        try? await storage.delete(TokenStorageKey.refreshToken)
        if wasSignedIn { states.send(.signedOut) }
    }

    /// An access token newer than `failed`: the current one if another call already refreshed,
    /// else the result of the one refresh in flight (started here if none runs).
    func freshAccessToken(replacing failed: String?) async throws -> String {
        if let accessToken, accessToken != failed { return accessToken }
        if let refreshing { return try await refreshing.value }
        let task = Task { try await self.performRefresh() }
        refreshing = task
        defer { refreshing = nil }
        return try await task.value
    }

    /// The access token to use now: the one in memory, or (after a restart) one from the stored refresh token.
    func usableAccessToken() async throws -> String {
        if let accessToken { return accessToken }
        return try await freshAccessToken(replacing: nil)
    }

    private func performRefresh() async throws -> String {
        guard let refreshToken = try await storage.read(TokenStorageKey.refreshToken) else {
            throw IdentityClientError.notSignedIn
        }
        let body: JSONObject = ["refresh_token": .string(refreshToken)]
        let answer: Transport.Answer
        do {
            do {
                answer = try await transport.send("POST", "/v1/auth/token/refresh", body: body)
            } catch let error where Transport.isTransportFailure(error) {
                // The answer may have been lost after the service rotated the token: presenting
                // the same token again within the 30-second grace gets the same successor, so
                // one retry is safe.
                answer = try await transport.send("POST", "/v1/auth/token/refresh", body: body)
            }
        } catch let error as IdentityError
                    where [.refreshTokenRevoked, .refreshTokenExpired, .invalidToken, .sessionExpired].contains(error.code) {
            await forget()
            throw error
        }
        let tokens = try Transport.data(TokenResponse.self, of: answer)
        try await storage.write(TokenStorageKey.refreshToken, value: tokens.refreshToken)
        accessToken = tokens.accessToken
        if let session = tokens.sessionId { sessionID = session }
        if let user = tokens.user { guestUID = user.isGuest ? user.uid : nil }
        states.send(.refreshed)
        return tokens.accessToken
    }
}
