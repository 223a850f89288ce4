/// A user as the gateway reads it: a row of the `user_profiles` view (migrations 0010 and 0011), which
/// has no secret column. The gateway's database role may read this view but not `users`, so
/// a password hash or guest secret cannot reach the gateway even through a bug in its SQL.
public struct UserProfile: Sendable {
    public var appId: String
    public var uid: String
    public var email: String?
    public var emailVerified: Bool
    public var phone: String?
    public var username: String?
    public var firstName: String?
    public var lastName: String?
    public var photoURL: String?
    /// Whether the user has a password (the view says so without the hash).
    public var hasPassword: Bool
    public var isGuest: Bool
    public var disabled: Bool
    public var roles: [String]
    /// Microseconds since the epoch.
    public var createdAtMicros: Int64
    /// The linked sign-in providers (apple, google, firebase), sorted.
    public var identityProviders: [String]
    /// Whether a second factor is on (the view says so without showing any of it).
    public var mfaEnabled: Bool
    /// JSON objects as compact text (migration 0012).
    public var customClaimsJSON: String
    public var appMetadataJSON: String
    public var userMetadataJSON: String
    /// BCP 47, or nil when the user gave none.
    public var locale: String?

    /// A profile made from a `users` row (`UserRecord.profile`, IdentityCredentials).
    package init(appId: String, uid: String, email: String?, emailVerified: Bool, phone: String?, username: String?,
                 firstName: String?, lastName: String?, photoURL: String?, hasPassword: Bool, isGuest: Bool,
                 disabled: Bool, roles: [String], createdAtMicros: Int64, identityProviders: [String], mfaEnabled: Bool,
                 customClaimsJSON: String, appMetadataJSON: String, userMetadataJSON: String, locale: String?) {
        self.appId = appId
        self.uid = uid
        self.email = email
        self.emailVerified = emailVerified
        self.phone = phone
        self.username = username
        self.firstName = firstName
        self.lastName = lastName
        self.photoURL = photoURL
        self.hasPassword = hasPassword
        self.isGuest = isGuest
        self.disabled = disabled
        self.roles = roles
        self.createdAtMicros = createdAtMicros
        self.identityProviders = identityProviders
        self.mfaEnabled = mfaEnabled
        self.customClaimsJSON = customClaimsJSON
        self.appMetadataJSON = appMetadataJSON
        self.userMetadataJSON = userMetadataJSON
        self.locale = locale
    }

    /// The user as clients see it: the one place the client's user object is made
    /// (`UserRecord.message` goes through here too).
    public var message: CommonV1.User {
        CommonV1.User(uid: uid, email: email, emailVerified: emailVerified, phone: phone, username: username,
                      firstName: firstName, lastName: lastName, photoUrl: photoURL, isGuest: isGuest,
                      hasPassword: hasPassword,
                      providers: (hasPassword ? ["password"] : []) + identityProviders,
                      roles: roles, mfaEnabled: mfaEnabled,
                      createdAt: Timestamp.rfc3339(microsecondsSinceEpoch: createdAtMicros),
                      appMetadataJson: appMetadataJSON, userMetadataJson: userMetadataJSON,
                      customClaimsJson: customClaimsJSON, disabled: disabled, locale: locale)
    }

    /// The columns `init(row:)` reads, all of the `user_profiles` view.
    static let columns = """
        app_id, uid, email, email_verified, phone, username, first_name, last_name, photo_url, \
        has_password, is_guest, disabled, roles, \
        (extract(epoch FROM created_at) * 1000000)::bigint AS created_us, identity_providers, mfa_enabled, \
        custom_claims::text AS custom_claims, app_metadata::text AS app_metadata, user_metadata::text AS user_metadata, locale
        """

}

extension UserProfile {
    init(row: PGRow) throws {
        appId = try row.string("app_id")
        uid = try row.string("uid")
        email = try row.optionalString("email")
        emailVerified = try row.bool("email_verified")
        phone = try row.optionalString("phone")
        username = try row.optionalString("username")
        firstName = try row.optionalString("first_name")
        lastName = try row.optionalString("last_name")
        photoURL = try row.optionalString("photo_url")
        hasPassword = try row.bool("has_password")
        isGuest = try row.bool("is_guest")
        disabled = try row.bool("disabled")
        roles = try row.stringArray("roles")
        createdAtMicros = try row.int64("created_us")
        identityProviders = try row.stringArray("identity_providers")
        customClaimsJSON = try row.string("custom_claims")
        appMetadataJSON = try row.string("app_metadata")
        userMetadataJSON = try row.string("user_metadata")
        mfaEnabled = try row.bool("mfa_enabled")
        locale = try row.optionalString("locale")
    }
}
