import Foundation
import IdentityCredentials
import IdentityKit

/// An invitation link opened (docs/console.md, "Getting in"): its page's facts, and its
/// acceptance, which makes the invitee's console account. The link's token is the only
/// authority: opening the mail proves the address, as a password reset's code does, so the
/// account made here has its email verified, and an unverified account of that address (made
/// by anyone before) keeps none of the ways in set before this proof (`EmailOwnership`).
/// A verified account is never touched: its owner signs in as before, and the link is spent.
struct ConsoleInvitationAcceptance: Sendable {
    let pool: PGPool
    let users: UserStore
    let hasher: PasswordHasher
    let ownership: EmailOwnership
    let invitations = ConsoleInvitationStore()

    /// The audit action of an acceptance, in the invited app's log beside the invitation's.
    static let auditAction = "console.members.accept"

    func read(_ command: AdminV1.ReadConsoleInvitation) throws -> AdminV1.ConsoleInvitation {
        try pool.transaction { connection in
            let (found, consoleAppId) = try find(command.token, forUpdate: false, on: connection)
            return Self.answer(found, state: found.state, hasAccount: try verifiedAccount(consoleAppId, found.email, on: connection))
        }
    }

    func accept(_ command: AdminV1.AcceptConsoleInvitation, _ context: CommandContext) throws -> AdminV1.ConsoleInvitation {
        // A look first, so that an unknown, spent or expired link, or an invitee who has an
        // account, buys no Argon2 work.
        let seen = try read(AdminV1.ReadConsoleInvitation(token: command.token))
        guard seen.state == ConsoleInvitationStore.State.open.rawValue else { return seen }
        var hash: String?
        if !seen.hasAccount {
            if let problem = PasswordPolicy.problem(with: command.password) { throw ServiceError.weakPassword(problem) }
            hash = try hasher.hash(command.password)  // before the transaction: Argon2 holds no lock
        }
        return try pool.transaction { connection in
            let (found, consoleAppId) = try find(command.token, forUpdate: true, on: connection)
            guard found.state == .open else {
                return Self.answer(found, state: found.state, hasAccount: try verifiedAccount(consoleAppId, found.email, on: connection))
            }
            let account: String
            let existing = try users.find(appId: consoleAppId, email: found.email, on: connection)
            if let existing, existing.emailVerified {
                account = "existing"
            } else {
                // The account was verified by someone else between the look and now: never here
                // (a verified account stays verified), but a missing password must not pass.
                guard let hash else { throw ServiceError.weakPassword("must be given") }
                if let existing {
                    try ownership.proved(existing, appId: consoleAppId, on: connection)
                    try users.setPassword(appId: consoleAppId, uid: existing.uid, hash: hash, on: connection)
                    try users.markEmailVerified(appId: consoleAppId, uid: existing.uid, on: connection)
                    account = "proved"
                } else {
                    var new = UserStore.NewUser(email: found.email, username: nil, firstName: nil, lastName: nil, passwordHash: hash)
                    new.emailVerified = true
                    let created = try users.insert(new, appId: consoleAppId, on: connection)
                    try Events.userCreated(appId: consoleAppId, uid: created.uid, email: created.email, on: connection)
                    account = "created"
                }
            }
            try invitations.markAccepted(id: found.id, on: connection)
            try AuditLog.append(appId: found.appId, AuditLog.Entry(
                actor: "invitation:" + found.email, action: Self.auditAction, target: "console_member:" + found.email,
                ip: command.ip.isEmpty ? nil : command.ip, requestId: context.requestId.isEmpty ? nil : context.requestId,
                detail: .object(["via": .string("console"), "email": .string(found.email), "role": .string(found.role.rawValue),
                                 "account": .string(account)])), on: connection)
            return Self.answer(found, state: .accepted, hasAccount: true, acceptedNow: true)
        }
    }

    /// The invitation and the console app's id; not found for an unknown token, a withdrawn
    /// invitation, or a deployment without a console.
    private func find(_ token: String, forUpdate: Bool, on connection: PGConnection) throws
        -> (ConsoleInvitationStore.Found, String) {
        guard let consoleAppId = try connection.query("SELECT app_id FROM console_app").first?.string("app_id"),
              let found = try invitations.find(token: token, forUpdate: forUpdate, on: connection)
        else { throw ServiceError.notFound }
        return (found, consoleAppId)
    }

    private func verifiedAccount(_ consoleAppId: String, _ email: String, on connection: PGConnection) throws -> Bool {
        try connection.query("""
            SELECT 1 FROM users WHERE app_id = $1 AND lower(email) = $2 AND email_verified
            """, [consoleAppId, email]).first != nil
    }

    private static func answer(_ found: ConsoleInvitationStore.Found, state: ConsoleInvitationStore.State,
                               hasAccount: Bool, acceptedNow: Bool = false) -> AdminV1.ConsoleInvitation {
        AdminV1.ConsoleInvitation(state: state.rawValue, appId: found.appId, appName: found.appName, email: found.email,
                                  role: found.role.rawValue, hasAccount: hasAccount, acceptedNow: acceptedNow)
    }
}

extension CommandRouter {
    var consoleInvitations: ConsoleInvitationAcceptance {
        ConsoleInvitationAcceptance(pool: stores.pool, users: recovery.users, hasher: recovery.hasher,
                                    ownership: recovery.ownership)
    }

    func handle(_ command: AdminV1.ReadConsoleInvitation, _ context: CommandContext) throws -> CommandConsumer.Reply {
        try .init(consoleInvitations.read(command))
    }
    func handle(_ command: AdminV1.AcceptConsoleInvitation, _ context: CommandContext) throws -> CommandConsumer.Reply {
        try .init(consoleInvitations.accept(command, context))
    }
}
