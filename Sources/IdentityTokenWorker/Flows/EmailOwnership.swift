import IdentityKit

/// PRODUCT.md, "Email ownership" (pre-account hijacking): a stranger may register someone
/// else's address with a password, or link a provider, before its owner ever comes. The first
/// proof that someone controls the address (a mailed code, a magic link, a password reset) on
/// an account whose email was unverified therefore ends every session, drops the password and
/// the provider links set before the proof, and says so with `user.updated`
/// (`change: email_ownership_proved`). The stranger keeps nothing; the owner carries on with
/// the session the proof starts (or the password the reset sets).
struct EmailOwnership: Sendable {
    let users: UserStore
    let sessions: SessionStore
    let identities: IdentityStore

    /// Applies the rule to `user` in the caller's transaction; returns true when the account
    /// was unverified (and is now the prover's alone).
    @discardableResult
    func proved(_ user: UserRecord, appId: String, on connection: PGConnection) throws -> Bool {
        guard !user.emailVerified,
              try users.takeOverByEmailProof(appId: appId, uid: user.uid, on: connection) else { return false }
        _ = try identities.unlinkAll(appId: appId, uid: user.uid, on: connection)
        _ = try sessions.end(appId: appId, uid: user.uid, sessionId: nil, reason: "email_ownership_proved",
                             on: connection)
        try Events.userUpdated(appId: appId, uid: user.uid, change: "email_ownership_proved", on: connection)
        return true
    }

    /// The rule for a proof made in one of the account's own sessions (email verification sent
    /// with that session's token): whoever holds the session also reads the mailbox, so they
    /// are the owner and keep their password and links; every other session ends, as any proof
    /// ends them. Returns true when the account was unverified.
    @discardableResult
    func provedInSession(_ user: UserRecord, appId: String, sessionId: String, on connection: PGConnection) throws -> Bool {
        guard !user.emailVerified else { return false }
        _ = try sessions.end(appId: appId, uid: user.uid, sessionId: nil, except: sessionId,
                             reason: "email_ownership_proved", on: connection)
        return true
    }
}
