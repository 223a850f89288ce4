import IdentityCredentials
import IdentityKit

/// `identity.token.v1.ApplyAppleEvent`: what Apple told the app's server about one of its users
/// (POST /v1/apps/{app_id}/apple/notifications), verified and sealed by the provider worker.
/// Each event is applied once, in one transaction with its record (Apple retries until it gets
/// a 2xx, and a retry finds the record):
/// - `consent-revoked`: the user stopped using Sign in with Apple with this app. The Apple link
///   goes and every session that signed in with Apple ends; an account with no other way in (a
///   private-relay address is none) is disabled (every session ended), not deleted: the app's
///   backend may still reach its owner.
/// - `account-delete`: the user deleted their Apple ID. The same, except that an account with
///   no other way in is deleted, with the usual deletion events.
/// - `email-disabled` / `email-enabled`: the relay address stopped or started forwarding; while
///   it does not, the mailer sends nothing to it.
/// Each change is published as `user.updated` (`apple_consent_revoked`, `apple_account_deleted`,
/// with `removed: ["provider:apple"]`, and `"account:disabled"` when the account was disabled).
struct AppleAccountEvents: Sendable {
    /// Where Apple's private-relay addresses live.
    static let relayDomain = "privaterelay.appleid.com"

    let pool: PGPool
    let users: UserStore
    let sessions: SessionStore
    let identities: IdentityStore
    let waysIn: WaysInReader
    let deletion: AccountDeletion
    let seal: ProviderIdentitySeal

    func apply(_ command: TokenV1.ApplyAppleEvent) throws -> TokenV1.Done {
        // Only the provider worker's sealed word counts: a forged command changes nothing.
        guard let event = command.event, seal.isValid(event, appId: command.appId) else {
            throw ProviderErrors.invalidToken("apple")
        }
        try pool.transaction { connection in
            let recorded = try connection.query("""
                INSERT INTO apple_notifications (app_id, event_id, type, subject) VALUES ($1, $2, $3, $4)
                ON CONFLICT DO NOTHING RETURNING 1 AS recorded
                """, [command.appId, event.eventId, event.type, event.subject])
            guard !recorded.isEmpty else { return }  // applied before
            switch event.type {
            case "email-disabled", "email-enabled":
                try relayForwarding(appId: command.appId, email: event.email ?? "", on: event.type == "email-enabled",
                                    connection: connection)
            case "consent-revoked", "account-delete":
                try appleLinkEnded(appId: command.appId, subject: event.subject, deleted: event.type == "account-delete",
                                   connection: connection)
            default:
                break  // the provider worker passes only the types above
            }
        }
        return TokenV1.Done()
    }

    private func relayForwarding(appId: String, email: String, on forwarding: Bool, connection: PGConnection) throws {
        if forwarding {
            try connection.query("DELETE FROM undeliverable_emails WHERE app_id = $1 AND email_lower = lower($2)",
                                 [appId, email])
        } else {
            try connection.query("""
                INSERT INTO undeliverable_emails (app_id, email_lower) VALUES ($1, lower($2)) ON CONFLICT DO NOTHING
                """, [appId, email])
        }
    }

    private func appleLinkEnded(appId: String, subject: String, deleted: Bool, connection: PGConnection) throws {
        guard let uid = try identities.owner(appId: appId, provider: "apple", subject: subject, on: connection),
              try users.lock(appId: appId, uid: uid, on: connection),
              let user = try users.find(appId: appId, uid: uid, on: connection) else { return }  // no account of it here
        let change = deleted ? "apple_account_deleted" : "apple_consent_revoked"
        let reason = deleted ? "apple_account_deleted" : "apple_consent_revoked"
        var ways = try waysIn.ways(of: user, on: connection)
        // A private-relay address is Apple's: it is no way in once Apple is gone.
        if user.email?.lowercased().hasSuffix("@" + Self.relayDomain) == true { ways.email = false }
        guard ways.oneMayGo else {
            // Apple was the only way in.
            // The Apple link goes first: the erasure then queues no revocation at Apple of an
            // Apple ID Apple itself has deleted.
            _ = try identities.unlink(appId: appId, uid: uid, provider: "apple", on: connection)
            if deleted {
                try deletion.eraseForApple(appId: appId, uid: uid, email: user.email, on: connection)
                return
            }
            var changes = UserAdminStore.Changes()
            changes.disabled = true
            _ = try UserAdminStore.update(appId: appId, uid: uid, changes, on: connection)
            _ = try sessions.end(appId: appId, uid: uid, sessionId: nil, reason: reason, on: connection)
            try Events.userDisabled(appId: appId, uid: uid, disabled: true, on: connection)
            try Events.userUpdated(appId: appId, uid: uid, change: change, removed: ["provider:apple", "account:disabled"],
                                   on: connection)
            return
        }
        _ = try identities.unlink(appId: appId, uid: uid, provider: "apple", on: connection)
        _ = try sessions.end(appId: appId, uid: uid, sessionId: nil, signedInWith: "apple", reason: reason, on: connection)
        try Events.userUpdated(appId: appId, uid: uid, change: change, removed: ["provider:apple"], on: connection)
    }
}

/// The Apple notification's command, handled beside its flow.
extension CommandRouter {
    func handle(_ command: TokenV1.ApplyAppleEvent, _ context: CommandContext) throws -> CommandConsumer.Reply {
        let events = AppleAccountEvents(pool: stores.pool, users: stores.users, sessions: stores.sessions,
                                        identities: stores.identities, waysIn: stores.waysIn, deletion: deletion,
                                        seal: deletion.identitySeal)
        return try .init(events.apply(command))
    }
}
