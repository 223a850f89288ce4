/// A user row. `passwordHash` is read only by the token worker.
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

    /// The user as clients see it.
    public var message: CommonV1.User {
        CommonV1.User(uid: uid, email: email, emailVerified: emailVerified, phone: phone, username: username,
                      firstName: firstName, lastName: lastName, photoUrl: photoURL, isGuest: isGuest,
                      hasPassword: passwordHash != nil,
                      providers: (passwordHash != nil ? ["password"] : []) + identityProviders,
                      roles: roles, mfaEnabled: false,
                      createdAt: Timestamp.rfc3339(microsecondsSinceEpoch: createdAtMicros))
    }

    /// The columns `init(row:)` reads, for SELECT and RETURNING clauses.
    static let columns = """
        app_id, uid, email, email_verified, phone, username, first_name, last_name, photo_url, \
        password_hash, is_guest, disabled, roles, \
        (extract(epoch FROM created_at) * 1000000)::bigint AS created_us, \
        ARRAY(SELECT i.provider FROM user_identities i WHERE i.app_id = users.app_id AND i.uid = users.uid \
              ORDER BY i.provider) AS identity_providers
        """

    init(row: PGRow) {
        appId = row.string("app_id")
        uid = row.string("uid")
        email = row["email"]
        emailVerified = row.bool("email_verified")
        phone = row["phone"]
        username = row["username"]
        firstName = row["first_name"]
        lastName = row["last_name"]
        photoURL = row["photo_url"]
        passwordHash = row["password_hash"]
        isGuest = row.bool("is_guest")
        disabled = row.bool("disabled")
        roles = row.stringArray("roles")
        createdAtMicros = row.int64("created_us")
        identityProviders = row.stringArray("identity_providers")
    }
}
