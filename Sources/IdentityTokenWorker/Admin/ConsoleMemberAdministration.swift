import Foundation
import IdentityCredentials
import IdentityKit

/// The web console's member changes (`CONSOLE_OWNER` commands, the Members page). The token
/// worker carries them out because it already reads `console_roles` and the console user's
/// verified email to accept a console session as an admin command's authority: the role checked
/// and the row written are one process's, in one transaction. The dispatch checked the caller's
/// session and `owner` role (`CallerAuthority.checkConsoleOwner`); here, with the app's rows
/// locked, the role is read again (a concurrent demotion wins or waits), the last owner kept,
/// and the row, its audit row and (for an invitation) the invitation mail's outbox row written
/// together.
struct ConsoleMemberAdministration: Sendable {
    let pool: PGPool

    typealias Role = ConsoleStore.Role

    func invite(_ command: AdminV1.InviteConsoleMember, _ context: CommandContext) throws -> AdminV1.ConsoleMemberChanged {
        let email = try Self.email(command.email)
        let role = try Self.role(command.role)
        return try change(appId: command.appId, consoleUid: command.consoleUid, email: email, ip: command.ip,
                          action: AdminV1.InviteConsoleMember.auditAction, context: context) { change in
            guard change.current == nil else { throw ServiceError.consoleMemberExists }
            try change.connection.query("""
                INSERT INTO console_roles (app_id, email, role, invited_by) VALUES ($1, $2, $3, $4)
                """, [command.appId, email, role.rawValue, String(change.callerEmail.prefix(200))])
            try Self.queueInvitation(change, role: role)
            return role
        }
    }

    func changeRole(_ command: AdminV1.ChangeConsoleMemberRole, _ context: CommandContext) throws
        -> AdminV1.ConsoleMemberChanged {
        let email = try Self.email(command.email)
        let role = try Self.role(command.role)
        return try change(appId: command.appId, consoleUid: command.consoleUid, email: email, ip: command.ip,
                          action: AdminV1.ChangeConsoleMemberRole.auditAction, context: context) { change in
            guard change.current != nil else { throw ServiceError.notFound }
            guard !ConsoleMemberRules.removesLastOwner(owners: change.owners, email: email, newRole: role) else {
                throw ServiceError.lastConsoleOwner
            }
            try change.connection.query("UPDATE console_roles SET role = $3 WHERE app_id = $1 AND email = $2",
                                        [command.appId, email, role.rawValue])
            return role
        }
    }

    func remove(_ command: AdminV1.RemoveConsoleMember, _ context: CommandContext) throws -> AdminV1.ConsoleMemberChanged {
        let email = try Self.email(command.email)
        return try change(appId: command.appId, consoleUid: command.consoleUid, email: email, ip: command.ip,
                          action: AdminV1.RemoveConsoleMember.auditAction, context: context) { change in
            guard change.current != nil else { throw ServiceError.notFound }
            guard !ConsoleMemberRules.removesLastOwner(owners: change.owners, email: email, newRole: nil) else {
                throw ServiceError.lastConsoleOwner
            }
            try change.connection.query("DELETE FROM console_roles WHERE app_id = $1 AND email = $2", [command.appId, email])
            return nil
        }
    }

    /// What a change sees inside its transaction.
    struct Change {
        let connection: PGConnection
        let appId: String
        let appName: String
        let consoleAppId: String
        let callerEmail: String
        let email: String
        /// The member's role before the change, nil when the address holds none.
        let current: Role?
        /// The app's owners before the change.
        let owners: Set<String>
    }

    /// Locks the app's members, checks the caller is an owner still, runs `apply` (the role now
    /// held, nil once removed) and writes the audit row, all in one transaction.
    private func change(appId: String, consoleUid: String, email: String, ip: String, action: String,
                        context: CommandContext, apply: (Change) throws -> Role?) throws -> AdminV1.ConsoleMemberChanged {
        try pool.transaction { connection in
            guard let consoleAppId = try connection.query("SELECT app_id FROM console_app").first?.string("app_id"),
                  let appName = try connection.query("SELECT name FROM apps WHERE id = $1", [appId]).first?.string("name")
            else { throw ServiceError.notFound }
            var roles: [String: Role] = [:]
            for row in try connection.query("SELECT email, role FROM console_roles WHERE app_id = $1 ORDER BY email FOR UPDATE",
                                            [appId]) {
                roles[try row.string("email")] = Role(rawValue: try row.string("role"))
            }
            let callerRole = try connection.query("SELECT console_role($1, $2, $3) AS role", [consoleAppId, consoleUid, appId])
                .first?.optionalString("role")
            guard callerRole == Role.owner.rawValue,
                  let callerEmail = try connection.query("SELECT lower(email) AS email FROM user_profiles WHERE app_id = $1 AND uid = $2",
                                                         [consoleAppId, consoleUid]).first?.optionalString("email")
            else { throw ServiceError.consoleOwnerRequired }
            let change = Change(connection: connection, appId: appId, appName: appName, consoleAppId: consoleAppId,
                                callerEmail: callerEmail, email: email, current: roles[email],
                                owners: Set(roles.filter { $0.value == .owner }.keys))
            let now = try apply(change)
            var detail: [String: JSONValue] = ["via": .string("console"), "email": .string(email), "console_email": .string(callerEmail)]
            detail["role"] = now.map { .string($0.rawValue) } ?? .null
            detail["previous_role"] = change.current.map { .string($0.rawValue) } ?? .null
            try AuditLog.append(appId: appId, AuditLog.Entry(
                actor: "console:" + consoleUid, action: action, target: "console_member:" + email,
                ip: ip.isEmpty ? nil : ip, requestId: context.requestId.isEmpty ? nil : context.requestId,
                detail: .object(detail)), on: connection)
            return AdminV1.ConsoleMemberChanged(email: email, role: now?.rawValue ?? "")
        }
    }

    /// The invitation mail, through the outbox with the change: written as the console app's
    /// mail (its name, sender, templates and default language, the invitee having no locale
    /// here), naming the app, the role and the inviter, and carrying the invitation link
    /// (`ConsoleInvitationLink`) on the console's origin, where the invitee makes their console
    /// account or, holding one, accepts and signs in. Sent whether or not the address has a
    /// console account: the answer and the mail are the same either way, so an invitation tells
    /// the owner nothing the member list does not.
    private static func queueInvitation(_ change: Change, role: Role) throws {
        let origin = try change.connection.query("SELECT allowed_origins FROM app_client_profiles WHERE app_id = $1",
                                                 [change.consoleAppId]).first?.stringArray("allowed_origins").first ?? ""
        let token = try ConsoleInvitationStore().create(appId: change.appId, email: change.email, on: change.connection)
        let mail = MailerV1.SendEmail(
            messageId: "mail_" + Identifiers.nowULID(), appId: change.consoleAppId, to: change.email,
            kind: MailKind.consoleInvitation.name, code: "",
            link: origin.isEmpty ? nil : ConsoleInvitationLink.url(origin: origin, token: token),
            values: [
                MailerV1.TemplateValue(name: "member_app", value: String(change.appName.prefix(200))),
                MailerV1.TemplateValue(name: "role", value: role.rawValue),
                MailerV1.TemplateValue(name: "inviter", value: change.callerEmail),
            ], languages: [])
        try EventOutbox.appendCommand(mail, queue: DeliveryChannel.email.queue, appId: change.consoleAppId, on: change.connection)
    }

    private static func email(_ given: String) throws -> String {
        guard let email = ConsoleMemberRules.normalizedEmail(given) else { throw ServiceError.invalidEmail(at: "body.email") }
        return email
    }

    private static func role(_ given: String) throws -> Role {
        guard let role = Role(rawValue: given) else {
            throw ServiceError.validationFailed([.init(location: "body.role", message: "must be owner, admin or viewer")])
        }
        return role
    }
}

extension CommandRouter {
    var consoleMembers: ConsoleMemberAdministration { ConsoleMemberAdministration(pool: stores.pool) }

    func handle(_ command: AdminV1.InviteConsoleMember, _ context: CommandContext) throws -> CommandConsumer.Reply {
        try .init(consoleMembers.invite(command, context))
    }
    func handle(_ command: AdminV1.ChangeConsoleMemberRole, _ context: CommandContext) throws -> CommandConsumer.Reply {
        try .init(consoleMembers.changeRole(command, context))
    }
    func handle(_ command: AdminV1.RemoveConsoleMember, _ context: CommandContext) throws -> CommandConsumer.Reply {
        try .init(consoleMembers.remove(command, context))
    }
}
