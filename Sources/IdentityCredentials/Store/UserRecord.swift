import IdentityKit

/// A user row, as the workers read it. `passwordHash` is read only by the token worker; the
/// gateway reads `UserProfile` (the `user_profiles` view) instead, and may not read this.
public struct UserRecord: Sendable {
    public var appId: String
    public var uid: String
    public var email: String?
    public var emailVerified: Bool
    public var phone: String?
    public var username: String?
    public var firstName: String?
    public var lastName: String?
    public var photoURL: String?
    public var passwordHash: String?
    public var isGuest: Bool
    public var disabled: Bool
    public var roles: [String]
    /// Microseconds since the epoch.
    public var createdAtMicros: Int64
    /// The linked sign-in providers (apple, google, firebase), sorted.
    public var identityProviders: [String]
    /// Whether a second factor is on (a confirmed row of `mfa_factors`).
    public var mfaEnabled: Bool
    /// JSON objects as compact text (migration 0012).
    public var customClaimsJSON: String
    public var appMetadataJSON: String
    public var userMetadataJSON: String
    /// BCP 47, or nil when the user gave none (`MessageLanguages`).
    public var locale: String?

    /// What the account shows of itself: its profile, with `has_password` instead of the hash.
    public var profile: UserProfile {
        UserProfile(appId: appId, uid: uid, email: email, emailVerified: emailVerified, phone: phone, username: username,
                    firstName: firstName, lastName: lastName, photoURL: photoURL, hasPassword: passwordHash != nil,
                    isGuest: isGuest, disabled: disabled, roles: roles, createdAtMicros: createdAtMicros,
                    identityProviders: identityProviders, mfaEnabled: mfaEnabled, customClaimsJSON: customClaimsJSON,
                    appMetadataJSON: appMetadataJSON, userMetadataJSON: userMetadataJSON, locale: locale)
    }

    /// The user as clients see it.
    public var message: CommonV1.User { profile.message }

    /// The columns `init(row:)` reads, for SELECT and RETURNING clauses.
    static let columns = """
        app_id, uid, email, email_verified, phone, username, first_name, last_name, photo_url, \
        password_hash, is_guest, disabled, roles, \
        (extract(epoch FROM created_at) * 1000000)::bigint AS created_us, \
        ARRAY(SELECT i.provider FROM user_identities i WHERE i.app_id = users.app_id AND i.uid = users.uid \
              ORDER BY i.provider) AS identity_providers, \
        EXISTS (SELECT 1 FROM mfa_factors f WHERE f.app_id = users.app_id AND f.uid = users.uid \
                AND f.confirmed_at IS NOT NULL) AS mfa_enabled, \
        custom_claims::text AS custom_claims, app_metadata::text AS app_metadata, user_metadata::text AS user_metadata, locale
        """

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
        passwordHash = try row.optionalString("password_hash")
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
