import Foundation

/// The web console's members of an app (docs/console.md, Members): who holds a role there, as
/// `console_roles` has it. Everyone with a role sees the list; only an owner changes it, through
/// the token worker (`AdminV1.InviteConsoleMember`, …), which applies `ConsoleMemberRules`.
public struct ConsoleMember: Sendable, Equatable {
    public let email: String
    public let role: ConsoleStore.Role
    /// The inviting owner's email, or `operator` (`identityctl console invite`).
    public let invitedBy: String
    /// When the role was given (microseconds since the epoch).
    public let createdAtMicros: Int64
    /// A console account with this email, verified, exists: the role counts for it.
    public let hasAccount: Bool
}

/// What a member change may do, decided without the store: the worker calls these with the
/// app's rows locked, so two owners demoting each other cannot leave the app without one.
public enum ConsoleMemberRules {
    /// The address an invitation is for: trimmed and lower-cased (roles match the console
    /// account's email lower-cased), nil unless sign-up would accept it.
    public static func normalizedEmail(_ given: String) -> String? {
        let email = given.trimmingCharacters(in: .whitespaces).lowercased()
        guard email.utf8.count >= 3, EmailAddress.isValid(email) else { return nil }
        return email
    }

    /// Whether setting `email`'s role to `newRole` (nil: removing it) leaves the app without an
    /// owner, given the app's owners now.
    public static func removesLastOwner(owners: Set<String>, email: String, newRole: ConsoleStore.Role?) -> Bool {
        guard owners.contains(email), newRole != .owner else { return false }
        return owners.count <= 1
    }

    /// Whether a change from `current` to `newRole` (nil: none, an invitation or a removal)
    /// gives or takes `owner`: the console asks for a fresh sign-in first.
    public static func needsFreshSignIn(from current: ConsoleStore.Role?, to newRole: ConsoleStore.Role?) -> Bool {
        current != newRole && (current == .owner || newRole == .owner)
    }
}

/// Refusals of a member change (the console shows each as its page's message).
extension ServiceError {
    /// The console user holds a role in the app, but not `owner`.
    public static let consoleOwnerRequired = ServiceError(code: "auth/console-owner-required", status: 403,
                                                          detail: "Only an owner of this app can change its members.")
    public static let lastConsoleOwner = ServiceError(code: "auth/last-owner", status: 409,
                                                      detail: "This is the app's last owner: make another member an owner first.")
    public static let consoleMemberExists = ServiceError(code: "auth/member-exists", status: 409,
                                                         detail: "This address is a member already: change its role instead.")
}

extension ConsoleStore {
    /// Every member of `appId`, owners first then by email, with whether a verified console
    /// account of that email exists.
    public func members(consoleAppId: String, appId: String) throws -> [ConsoleMember] {
        let rows = try pool.withConnection { connection in
            try connection.query("""
                SELECT r.email, r.role, r.invited_by, (extract(epoch FROM r.created_at) * 1000000)::bigint AS created_us,
                       EXISTS (SELECT 1 FROM user_profiles p
                               WHERE p.app_id = $1 AND lower(p.email) = r.email AND p.email_verified) AS has_account
                FROM console_roles r WHERE r.app_id = $2
                ORDER BY CASE r.role WHEN 'owner' THEN 0 WHEN 'admin' THEN 1 ELSE 2 END, r.email
                """, [consoleAppId, appId])
        }
        return try rows.compactMap { row in
            guard let role = Role(rawValue: try row.string("role")) else { return nil }
            return ConsoleMember(email: try row.string("email"), role: role, invitedBy: try row.string("invited_by"),
                                 createdAtMicros: try row.int64("created_us"), hasAccount: try row.bool("has_account"))
        }
    }
}
