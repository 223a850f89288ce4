import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A client of the identity service's `/v1` API for one app: sign-in with every method of the
/// contract, the signed-in user's account, sessions, devices, MFA and passkeys.
///
/// The client keeps the session itself: the access token in memory, the refresh token in the
/// ``TokenStorage`` you give it. Signed-in calls refresh the tokens within a minute of the access
/// token's expiry, and once when the service says it expired, with exactly one refresh in flight
/// however many calls run at once.
///
/// ```swift
/// let identity = IdentityClient(baseURL: URL(string: "https://id.example.com")!,
///                               appKey: "pk_live_…",
///                               storage: KeychainTokenStorage(service: "com.example.app.identity"))
/// switch try await identity.signIn(email: email, password: password) {
/// case .signedIn(let user, _): show(user)
/// case .mfaRequired(let challenge): askForCode(challenge)
/// }
/// ```
public final class IdentityClient: Sendable {
    let transport: Transport
    let storage: any TokenStorage
    let keeper: SessionKeeper
    private let states = AuthStateBroadcaster()

    /// - Parameters:
    ///   - baseURL: the service's root, e.g. `https://id.example.com` (the client adds `/v1/...`).
    ///   - appKey: the app's public key (`X-App-Key`), safe to ship in the app.
    ///   - storage: where the refresh token and guest secret are kept between launches.
    ///   - session: the `URLSession` to use (a custom one for proxies, pinning or tests).
    ///   - userAgent: sent as `User-Agent`; shown to the user in their session list.
    public convenience init(baseURL: URL, appKey: String, storage: any TokenStorage,
                session: URLSession = .shared, userAgent: String? = nil) {
        self.init(baseURL: baseURL, appKey: appKey, storage: storage, session: session, userAgent: userAgent,
                  clock: { Date() })
    }

    /// With another clock than the device's (tests that move time forward).
    init(baseURL: URL, appKey: String, storage: any TokenStorage, session: URLSession, userAgent: String?,
         clock: @escaping @Sendable () -> Date) {
        transport = Transport(baseURL: baseURL, appKey: appKey, session: session, userAgent: userAgent)
        self.storage = storage
        keeper = SessionKeeper(transport: transport, storage: storage, states: states, clock: clock)
    }

    /// A new stream of the client's auth states: first the present one (``AuthState/signedIn(_:)``
    /// with the user last known, or ``AuthState/signedOut``), then every change
    /// (``AuthState/signedIn(_:)``, ``AuthState/signedOut``, ``AuthState/refreshed``). Each call
    /// gives an independent stream; stop iterating to unsubscribe.
    ///
    /// ```swift
    /// for await state in identity.authStates {
    ///     switch state {
    ///     case .signedIn(let user): showHome(user)
    ///     case .signedOut: showSignIn()
    ///     case .refreshed: break
    ///     }
    /// }
    /// ```
    public var authStates: AsyncStream<AuthState> {
        let keeper = keeper
        return states.stream { await keeper.establishState() }
    }

    /// The signed-in user as last known (from the sign-in, the last refresh or the last call that
    /// returned the user, such as ``me()``), kept in the storage so it is there at the next
    /// launch before any call; nil when signed out. Makes no request: call ``me()`` for the
    /// service's current view.
    public var currentUser: User? {
        get async { await keeper.knownUser() }
    }

    /// The session of the access token in memory (its expiry, the session id, how the user
    /// signed in); nil when signed out, and after a launch until the first signed-in call or
    /// ``accessToken()``. Makes no request.
    public var currentSession: CurrentSession? {
        get async { await keeper.currentSession() }
    }

    /// Whether the client has a session (a refresh token is stored). It may still turn out to be
    /// revoked on the next call.
    public var isSignedIn: Bool {
        get async { ((try? await storage.read(TokenStorageKey.refreshToken)) ?? nil) != nil }
    }

    /// An access token to send now, for calling your own backend (which verifies it offline,
    /// JWKS): the one in memory while it is more than 60 seconds from expiry, else a refreshed
    /// one (also after a launch, when none is in memory). However many calls ask at once, one
    /// refresh runs. Offline within the last minute, the old token is returned until it expires.
    ///
    /// Throws ``IdentityClientError/notSignedIn`` without a session, and ``IdentityError``
    /// `.refreshTokenRevoked` (or `-Expired`) when the service ended it (the client is then
    /// signed out).
    public func accessToken() async throws -> String {
        try await keeper.usableAccessToken()
    }

    /// Forces a refresh now (it joins one already in flight).
    public func refresh() async throws {
        let current = await keeper.accessToken
        _ = try await keeper.freshAccessToken(replacing: current)
    }

    // MARK: - Plumbing shared by the extensions

    /// A call as the signed-in user: with the access token, refreshed and retried once when
    /// the service answers `auth/token-expired` or `auth/invalid-token`.
    func authorized(_ method: String, _ path: String, body: JSONObject? = nil) async throws -> Transport.Answer {
        let token = try await keeper.usableAccessToken()
        do {
            return try await transport.send(method, path, body: body, bearer: token)
        } catch let error as IdentityError where error.code == .tokenExpired || error.code == .invalidToken {
            let fresh = try await keeper.freshAccessToken(replacing: token)
            return try await transport.send(method, path, body: body, bearer: fresh)
        }
    }

    /// A declared request (`APIRequest`, generated from the service's declarations): with the
    /// signed-in user's token where the operation acts for them (or where `signedIn` asks for
    /// it: an optional caller that is signed in), else with the app key alone.
    func send(_ request: APIRequest, signedIn: Bool? = nil) async throws -> Transport.Answer {
        if signedIn ?? request.signedIn {
            return try await authorized(request.method, request.path, body: request.body)
        }
        return try await transport.send(request)
    }

    /// A first-factor sign-in: sent with the guest's token when a guest is signed in and
    /// `upgradeGuest` is true (the service then turns that guest into this account).
    func firstFactor(_ request: APIRequest, upgradeGuest: Bool) async throws -> SignInResult {
        let upgrading = upgradeGuest ? await keeper.guestUID != nil : false
        return try await signInResult(try await send(request, signedIn: upgrading))
    }

    /// 200/201 → keep the tokens, `.signedIn`; 202 → `.mfaRequired`.
    func signInResult(_ answer: Transport.Answer) async throws -> SignInResult {
        if answer.status == 202 {
            struct Pending: Decodable { let mfa: MFAChallenge }
            return .mfaRequired(try Transport.data(Pending.self, of: answer).mfa)
        }
        let tokens = try Transport.data(TokenResponse.self, of: answer)
        guard let user = tokens.user else {
            throw IdentityClientError.invalidResponse(status: answer.status, body: "token answer without user")
        }
        try await keeper.keep(tokens)
        return .signedIn(user, isNewUser: tokens.isNewUser ?? false)
    }

    func signedInUser(_ answer: Transport.Answer) async throws -> User {
        guard case .signedIn(let user, _) = try await signInResult(answer) else {
            throw IdentityClientError.invalidResponse(status: answer.status, body: "unexpected MFA challenge")
        }
        return user
    }
}
