import IdentityCredentials
import IdentityKit

/// Email ownership (pre-account hijacking; docs/api-contract.md, "Operating the service"): a
/// stranger may register someone else's address with a password, or link a provider, before its
/// owner ever comes, and then add passkeys, a phone and second factors. The first proof that
/// someone controls the address (a mailed code, a magic link, a password reset) on an account whose
/// email was unverified therefore ends every session and removes every way in set before it: the
/// password, the provider links, the passkeys (and open passkey ceremonies), the phone (and its
/// verification), every second factor, the backup codes and open MFA challenges. A factor left
/// behind would be the stranger's: the owner's code sign-in would stop at a challenge only the
/// stranger can answer, and the stranger's passkey would still sign in. It says so with
/// `user.updated` (`change: email_ownership_proved`, `removed` naming what went), `passkey.removed`
/// per passkey and `mfa.disabled` when MFA was on. The owner carries on with the session the proof
/// starts (or the password the reset sets), at one factor.
struct EmailOwnership: Sendable {
    let users: UserStore
    let sessions: SessionStore
    let identities: IdentityStore
    let passkeys: PasskeyStore
    let phones: UserPhoneStore
    let factors: MfaStore

    static let change = "email_ownership_proved"

    /// Applies the rule to `user` in the caller's transaction; returns true when the account
    /// was unverified (and is now the prover's alone).
    @discardableResult
    func proved(_ user: UserRecord, appId: String, on connection: PGConnection) throws -> Bool {
        guard !user.emailVerified,
              let takeover = try users.takeOverByEmailProof(appId: appId, uid: user.uid, on: connection) else { return false }
        var removed = takeover.droppedPassword ? ["password"] : []
        removed += try identities.unlinkAll(appId: appId, uid: user.uid, on: connection).map { "identity:" + $0 }
        let passkeyIds = try passkeys.deleteAll(appId: appId, uid: user.uid, on: connection)
        removed += passkeyIds.map { "passkey:" + $0 }
        if try phones.remove(appId: appId, uid: user.uid, on: connection) { removed.append("phone") }
        let mfa = try factors.remove(appId: appId, uid: user.uid, on: connection)
        removed += mfa.confirmedMethods.map { "mfa:" + $0.rawValue }
        if mfa.backupCodes > 0 { removed.append("backup_codes") }
        _ = try sessions.end(appId: appId, uid: user.uid, sessionId: nil, reason: Self.change, on: connection)
        for id in passkeyIds {
            try Events.passkeyRemoved(appId: appId, uid: user.uid, passkeyId: id, on: connection)
        }
        if mfa.wasOn { try Events.mfaDisabled(appId: appId, uid: user.uid, reason: Self.change, on: connection) }
        try Events.userUpdated(appId: appId, uid: user.uid, change: Self.change, removed: removed, on: connection)
        return true
    }

    /// The rule for a proof made in one of the account's own sessions (email verification sent
    /// with that session's token): whoever holds the session also reads the mailbox, so they
    /// are the owner and keep every way in they set (password, links, passkeys, phone, second
    /// factors); every other session ends, as any proof ends them. Returns true when the
    /// account was unverified.
    @discardableResult
    func provedInSession(_ user: UserRecord, appId: String, sessionId: String, on connection: PGConnection) throws -> Bool {
        guard !user.emailVerified else { return false }
        _ = try sessions.end(appId: appId, uid: user.uid, sessionId: nil, except: sessionId,
                             reason: Self.change, on: connection)
        return true
    }
}
