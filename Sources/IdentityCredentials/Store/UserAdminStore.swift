import IdentityKit

/// The admin API's writes to users (token worker): any column an app's backend may set, with
/// the same unique indexes deciding taken emails and usernames. Scoped by `app_id`.
public enum UserAdminStore {
    /// What an admin update sets; nil leaves a column as it is.
    public struct Changes: Sendable {
        public var email: String?
        public var emailVerified: Bool?
        public var phone: String?
        public var username: String?
        public var firstName: String?
        public var lastName: String?
        /// Columns set to NULL (email, phone, username, first_name, last_name).
        public var clear: Set<String> = []
        public var roles: [String]?
        /// JSON objects as compact text.
        public var customClaims: String?
        public var appMetadata: String?
        public var userMetadata: String?
        public var disabled: Bool?

        public init() {}

        public var isEmpty: Bool {
            email == nil && emailVerified == nil && phone == nil && username == nil && firstName == nil
                && lastName == nil && clear.isEmpty && roles == nil && customClaims == nil && appMetadata == nil
                && userMetadata == nil && disabled == nil
        }
    }

    static let clearable: Set<String> = ["email", "phone", "username", "first_name", "last_name"]

    /// Applies `changes` in the caller's transaction; nil when the user is not in this app.
    /// A new email without `emailVerified` is unverified: nobody has proven it yet.
    public static func update(appId: String, uid: String, _ changes: Changes,
                              on connection: PGConnection) throws -> UserRecord? {
        var assignments = ["updated_at = now()"]
        var parameters: [String?] = [appId, uid]
        func set(_ column: String, _ value: String?, cast: String = "") {
            guard let value else { return }
            parameters.append(value)
            assignments.append("\(column) = $\(parameters.count)\(cast)")
        }
        set("email", changes.email)
        if changes.email != nil && changes.emailVerified == nil { assignments.append("email_verified = false") }
        set("email_verified", changes.emailVerified.map(PGParam.bool), cast: "::boolean")
        set("phone", changes.phone)
        // A number an admin sets (or clears) is not proved by its holder: it signs no one in.
        if changes.phone != nil || changes.clear.contains("phone") { assignments.append("phone_verified = false") }
        set("username", changes.username)
        set("first_name", changes.firstName)
        set("last_name", changes.lastName)
        for column in changes.clear.intersection(clearable).sorted() { assignments.append("\(column) = NULL") }
        set("roles", changes.roles.map(PGParam.textArray), cast: "::text[]")
        set("custom_claims", changes.customClaims, cast: "::jsonb")
        set("app_metadata", changes.appMetadata, cast: "::jsonb")
        set("user_metadata", changes.userMetadata, cast: "::jsonb")
        set("disabled", changes.disabled.map(PGParam.bool), cast: "::boolean")
        do {
            return try connection.query("""
                UPDATE users SET \(assignments.joined(separator: ", "))
                WHERE app_id = $1 AND uid = $2 RETURNING \(UserRecord.columns)
                """, parameters).first.map(UserRecord.init(row:))
        } catch StoreError.uniqueViolation(let constraint) {
            throw constraint == "users_username_per_app" ? UserStore.Conflict.username : UserStore.Conflict.email
        }
    }
}
