import Foundation
import IdentityCredentials
import IdentityKit

/// Starts a session for a signed-in user and mints its token pair: the session row and the
/// first refresh token's hash are written in the caller's transaction; the access token is
/// signed after, with the app's current key.
struct SessionIssuer: Sendable {
    let sessions: SessionStore
    let keys: SigningKeyCache
    let refreshTokenLifetimeSeconds: Int
    /// Derives first refresh tokens from command ids (see `firstRefreshToken`).
    let commandKey: [UInt8]
    /// The app's auth hooks: `before_token` before every access token signed here, and
    /// `before_sign_up`, which the flows that create accounts call through this.
    let hooks: AuthHookGate

    struct Started {
        let sessionId: String
        let refreshToken: String
    }

    func start(for user: UserRecord, assurance: Assurance, client: CommonV1.ClientInfo?, command: CommandContext,
               createdAccount: Bool, on connection: PGConnection) throws -> Started {
        let sessionId = Identifiers.prefixed("ses")
        let refreshToken = firstRefreshToken(command)
        try sessions.create(appId: user.appId, uid: user.uid, sessionId: sessionId, amr: assurance.amr, aal: assurance.aal,
                            ip: client?.ip ?? "", userAgent: client?.userAgent ?? "",
                            refreshTokenHash: Digest.sha256(refreshToken),
                            refreshLifetimeSeconds: refreshTokenLifetimeSeconds,
                            commandId: command.id.isEmpty ? nil : command.id, createdAccount: createdAccount,
                            on: connection)
        try Events.sessionCreated(appId: user.appId, uid: user.uid, sessionId: sessionId, amr: assurance.amr,
                                  on: connection)
        // Every session start goes through here, so every sign-in method is checked the same way.
        let alerts = SecurityAlerts()
        if try alerts.isNewDevice(appId: user.appId, uid: user.uid, userAgent: client?.userAgent ?? "", on: connection) {
            try alerts.raise(.newSignIn, appId: user.appId, uid: user.uid,
                             context: .init(sessionId: sessionId, ip: client?.ip ?? "", userAgent: client?.userAgent ?? ""),
                             on: connection)
        }
        return Started(sessionId: sessionId, refreshToken: refreshToken)
    }

    /// A session's first refresh token is derived from the id of the command that starts it
    /// (HMAC with a key only token workers hold): unguessable, stored only as a hash, and the
    /// same again when the command is redelivered, so `replay` can answer with it.
    func firstRefreshToken(_ command: CommandContext) -> String {
        guard !command.id.isEmpty else { return Identifiers.secret("rt") }
        return "rt_" + Base64URL.encode(Digest.hmacSHA256(key: commandKey, Array(command.id.utf8)))
    }

    /// The answer a redelivered command already earned: when its worker died after committing
    /// the session but before replying, the broker hands the command over again, and running
    /// it twice would answer, say, a sign-up's own account with 409. Nil when it never ran; a
    /// refusal when its session has ended since (a replay never revives a signed-out session).
    func replay(_ command: CommandContext, appId: String, users: UserStore) throws -> TokenV1.AuthResult? {
        guard command.redelivered, !command.id.isEmpty,
              let started = try sessions.startedBy(commandId: command.id, appId: appId) else { return nil }
        // The command ran and its session is over (signed out, revoked): it signs in no more.
        guard started.live else { throw ServiceError.invalidCredential }
        guard let user = try users.find(appId: appId, uid: started.uid) else { return nil }
        Log.info("redelivered command answered from its committed session", ["app_id": appId, "session_id": started.sessionId])
        return try result(for: user, sessionId: started.sessionId, refreshToken: firstRefreshToken(command),
                          assurance: Assurance(amr: started.amr, aal: started.aal), isNewUser: started.createdAccount, signingKey: signingKey(appId: appId))
    }

    /// The app's signing key, fetched before a flow writes anything, so a key that cannot be
    /// read fails the command before a user or session is created rather than after.
    func signingKey(appId: String) throws -> SigningKeyCache.Entry {
        guard let entry = try keys.entry(appId: appId) else {
            throw ServiceError(code: "auth/internal", status: 500, detail: "The app has no signing key.")
        }
        return entry
    }

    /// A new session's first tokens. When the app's `before_token` hook refuses them, the
    /// session it committed ends at once: no one ever held its refresh token.
    func result(for user: UserRecord, started: Started, assurance: Assurance, isNewUser: Bool,
                signingKey entry: SigningKeyCache.Entry) throws -> TokenV1.AuthResult {
        do {
            return try result(for: user, sessionId: started.sessionId, refreshToken: started.refreshToken,
                              assurance: assurance, isNewUser: isNewUser, signingKey: entry)
        } catch let error as ServiceError where error.code == ServiceError.hookRefused.code
            || error.code == ServiceError.hookFailed.code {
            _ = try? hooks.pool.transaction { connection in
                try sessions.end(appId: user.appId, uid: user.uid, sessionId: started.sessionId, reason: "hook_refused",
                                 on: connection)
            }
            throw error
        }
    }

    /// The token response for a session: a new access token beside `refreshToken`, with the
    /// claims the app's `before_token` hook adds (`trigger`: sign_in or refresh).
    func result(for user: UserRecord, sessionId: String, refreshToken: String, assurance: Assurance, isNewUser: Bool,
                signingKey entry: SigningKeyCache.Entry, trigger: String = "sign_in") throws -> TokenV1.AuthResult {
        let custom = try hooks.beforeToken(user: user, sessionId: sessionId, amr: assurance.amr, aal: assurance.aal,
                                           trigger: trigger)
        let now = Timestamp.nowSeconds()
        var claims = AccessTokenClaims(
            iss: entry.app.issuer, aud: entry.app.id, sub: user.uid, sid: sessionId,
            iat: now, exp: now + Int64(entry.app.accessTokenTTL), jti: Identifiers.nowULID(),
            amr: assurance.amr, aal: assurance.aal, isGuest: user.isGuest, email: user.email, emailVerified: user.emailVerified,
            roles: user.roles)
        claims.custom = custom
        let accessToken = try JWT.sign(claims, kid: entry.kid, key: entry.key)
        return TokenV1.AuthResult(accessToken: accessToken, tokenType: "Bearer",
                                  expiresIn: Int32(entry.app.accessTokenTTL), refreshToken: refreshToken,
                                  sessionId: sessionId, isNewUser: isNewUser, user: user.message)
    }
}

/// Which command a flow is running and whether the broker delivered it before (to a worker that
/// died). `id` is the command's key: its message id bound to the SHA-256 of its body. A session
/// or challenge records it, and a redelivery is answered from what it recorded only when both
/// match (`SessionIssuer.replay`): a publisher that learned a session's message id but cannot
/// write the original body (the password, code, passkey assertion or sealed identity it
/// carried) replays nothing, where the bare message id would have minted a token.
struct CommandContext: Sendable {
    let id: String
    let redelivered: Bool
    /// The gateway's request id, for audit rows.
    let requestId: String
    /// The app the message's header names (the command's own `app_id` is what it acts in).
    let messageAppId: String
    /// The request's languages, best first (its Accept-Language): what a message the command
    /// sends is written in when the user has no stored locale.
    var languages: [String] = []

    init(_ message: BusMessage) {
        id = Self.key(messageId: message.messageId, body: message.body)
        redelivered = message.redelivered
        requestId = message.requestId
        messageAppId = message.appId
        languages = message.languages
    }

    /// `messageId.sha256hex(body)`; empty for a message without an id (never replayed).
    static func key(messageId: String, body: Data) -> String {
        messageId.isEmpty ? "" : messageId + "." + Hex.encode(Digest.sha256([UInt8](body)))
    }

    init(id: String, redelivered: Bool, requestId: String = "", messageAppId: String = "") {
        self.id = id
        self.redelivered = redelivered
        self.requestId = requestId
        self.messageAppId = messageAppId
    }
}
