import Foundation

/// The web console's accounts (migration 0040, docs/console.md): which app is the console app,
/// and the role a console user holds in each app. A role is given to an email and counts only
/// for the console user whose email is that address and verified. Read by the gateway (which
/// pages it shows) and by the token worker (`CallerAuthority`: an admin command carrying a
/// console user's session token); written by identityctl (`console invite`) and by the token
/// worker for an app's owners (`ConsoleMemberAdministration`, the Members page).
public struct ConsoleStore: Sendable {
    public enum Role: String, Sendable, CaseIterable, Comparable {
        case viewer, admin, owner

        /// Owners and admins change an app's settings and users; a viewer only looks.
        public var mayChange: Bool { self != .viewer }

        private var rank: Int { Role.allCases.firstIndex(of: self) ?? 0 }
        public static func < (lhs: Role, rhs: Role) -> Bool { lhs.rank < rhs.rank }
    }

    /// An app a console user may see, with their role in it.
    public struct Membership: Sendable, Equatable {
        public let appId: String
        public let appName: String
        public let role: Role
    }

    package let pool: PGPool

    public init(pool: PGPool) { self.pool = pool }

    /// The console app's id, nil when `identityctl console init` has not run.
    public func consoleAppId() throws -> String? {
        try pool.withConnection { try $0.query("SELECT app_id FROM console_app").first?.string("app_id") }
    }

    /// Whether the console needs a strong sign-in (`console_app.require_mfa`, migration 0044):
    /// false when there is no console.
    public func requiresStrongSignIn() throws -> Bool {
        try pool.withConnection { try $0.query("SELECT require_mfa FROM console_app").first?.bool("require_mfa") } ?? false
    }

    /// A sign-in strong enough for a console that requires one: two steps (`mfa`: a password and
    /// a code, or a passkey with user verification) or a passkey (`hwk`, phishing-resistant).
    /// The gateway (which pages it shows) and the workers (`CallerAuthority`) ask the same.
    public static func isStrongSignIn(amr: [String]) -> Bool { amr.contains("mfa") || amr.contains("hwk") }

    /// Every app the console user `uid` (of the console app) holds a role in, by app name.
    public func memberships(consoleAppId: String, uid: String) throws -> [Membership] {
        let rows = try pool.withConnection { connection in
            try connection.query("""
                SELECT r.app_id, a.name, r.role
                FROM user_profiles p
                JOIN console_roles r ON r.email = lower(p.email)
                JOIN apps a ON a.id = r.app_id
                WHERE p.app_id = $1 AND p.uid = $2 AND p.email_verified AND NOT p.disabled
                ORDER BY a.name, r.app_id
                """, [consoleAppId, uid])
        }
        return try rows.compactMap { row in
            guard let role = Role(rawValue: try row.string("role")) else { return nil }
            return Membership(appId: try row.string("app_id"), appName: try row.string("name"), role: role)
        }
    }

    /// The console user's role in `appId`, nil when they hold none: `console_role` (migration
    /// 0041), which the revocation worker may call without reading profiles or roles.
    public func role(consoleAppId: String, uid: String, appId: String) throws -> Role? {
        let row = try pool.withConnection { connection in
            try connection.query("SELECT console_role($1, $2, $3) AS role", [consoleAppId, uid, appId]).first
        }
        return try row?.optionalString("role").flatMap(Role.init(rawValue:))
    }
}
