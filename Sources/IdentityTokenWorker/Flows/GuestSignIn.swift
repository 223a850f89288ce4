import IdentityCredentials
import IdentityKit

/// `identity.token.v1.GuestSignIn`: the client's 256-bit secret is the guest's credential.
/// Only an HMAC of it is stored (keyed by a server secret), as the lookup key.
struct GuestSignIn: Sendable {
    let pool: PGPool
    let users: UserStore
    let outcome: SignInOutcome
    let secretKey: [UInt8]

    func hmac(_ secret: String) -> [UInt8] { Digest.hmacSHA256(key: secretKey, Array(secret.utf8)) }

    func handle(_ command: TokenV1.GuestSignIn, _ context: CommandContext) throws -> TokenV1.AuthResult {
        guard (32...256).contains(command.secret.unicodeScalars.count) else {
            throw ServiceError.validationFailed([.init(location: "body.secret", message: "must be 32 to 256 characters")])
        }
        if let replay = try outcome.replay(context, appId: command.appId, users: users) { return replay }
        let signingKey = try outcome.signingKey(appId: command.appId)
        let (user, decision, created) = try pool.transaction { connection -> (UserRecord, SignInOutcome.Decision, Bool) in
            let secretHMAC = hmac(command.secret)
            // A guest's first call creates it: the app's before_sign_up hook is asked then only.
            let known = try !connection.query("SELECT 1 FROM users WHERE app_id = $1 AND guest_secret_hmac = $2",
                                              [command.appId, PGParam.bytea(secretHMAC)]).isEmpty
            let user: UserRecord
            var created = false
            if known {
                (user, created) = try users.findOrCreateGuest(appId: command.appId, secretHMAC: secretHMAC, on: connection)
            } else {
                user = try outcome.issuer.hooks.createAccount(appId: command.appId, method: "guest", new: nil,
                                                              ip: command.client?.ip, on: connection) {
                    let found = try users.findOrCreateGuest(appId: command.appId, secretHMAC: secretHMAC, on: connection)
                    created = found.created
                    return found.user
                }
            }
            guard !user.disabled else { throw ServiceError.userDisabled }
            if created { try Events.userCreated(appId: user.appId, uid: user.uid, email: nil, on: connection) }
            return (user, try outcome.decide(for: user, by: .guest, client: command.client, command: context,
                                             createdAccount: created, on: connection), created)
        }
        return try outcome.answer(decision, for: user, isNewUser: created, signingKey: signingKey)
    }
}

/// Turning a guest into the account a sign-in or sign-up creates: same uid, data kept, secret
/// forgotten. Runs inside the flow's transaction, so a conflict (409 `auth/account-exists`)
/// rolls back everything, the nonce or code spend included.
enum GuestUpgrade {
    /// The guest to upgrade, locked; nil when `uid` is absent or no longer a guest (a stale
    /// guest token after an upgrade): the flow then proceeds as a plain sign-in.
    static func guest(_ uid: String?, appId: String, users: UserStore, on connection: PGConnection) throws -> UserRecord? {
        guard let uid, !uid.isEmpty else { return nil }
        return try users.lockGuest(appId: appId, uid: uid, on: connection)
    }

    static func apply(_ upgrade: UserStore.Upgrade, to guest: UserRecord, users: UserStore,
                      on connection: PGConnection) throws -> UserRecord {
        let user: UserRecord
        do {
            user = try users.upgradeGuest(appId: guest.appId, uid: guest.uid, upgrade, on: connection)
        } catch UserStore.Conflict.email {
            throw ServiceError.accountExists
        } catch UserStore.Conflict.username {
            throw ServiceError.usernameTaken
        }
        try Events.userUpdated(appId: guest.appId, uid: guest.uid, change: "upgraded", on: connection)
        return user
    }
}
