import IdentityKit

/// The token worker's part of `SignInDeviceStore`: storing a sign-in's device token and looking
/// one up among the user's, both on `sign_in_devices.token_hash`. The gateway only asks
/// `isKnown` (through `sign_in_device_known`, which shows it no hash).
extension SignInDeviceStore {
    /// How long a device token counts when its device does not sign in again.
    public static let lifetimeSeconds = 90 * 86_400
    /// Tokens kept per user (the newest): a user does not sign in from more devices than this
    /// within 90 days, and a flood of sign-ins cannot grow the table.
    public static let keptPerUser = 10

    /// Records `token` for the user inside the sign-in's transaction, in place of `presented`
    /// (the one this sign-in came with, if it is this user's), keeping the user's newest few.
    /// A redelivered sign-in stores the same token again: nothing changes.
    public func issue(appId: String, uid: String, token: String, replacing presented: String,
                      on connection: PGConnection) throws {
        if Self.isDeviceToken(presented), presented != token {
            try connection.query("DELETE FROM sign_in_devices WHERE app_id = $1 AND uid = $2 AND token_hash = $3",
                                 [appId, uid, PGParam.bytea(Self.hash(presented))])
        }
        try connection.query("""
            INSERT INTO sign_in_devices (app_id, token_hash, uid, expires_at)
            VALUES ($1, $2, $3, now() + make_interval(secs => $4))
            ON CONFLICT (app_id, token_hash) DO NOTHING
            """, [appId, PGParam.bytea(Self.hash(token)), uid, String(Self.lifetimeSeconds)])
        try connection.query("""
            DELETE FROM sign_in_devices WHERE app_id = $1 AND uid = $2
              AND (expires_at <= now() OR token_hash IN (
                   SELECT token_hash FROM sign_in_devices WHERE app_id = $1 AND uid = $2
                   ORDER BY created_at DESC, token_hash OFFSET $3))
            """, [appId, uid, String(Self.keptPerUser)])
    }

    /// Whether `token` is stored for this user (a redelivered sign-in answers with its token
    /// only if its first run stored it).
    public func isStored(appId: String, uid: String, token: String) throws -> Bool {
        try pool.withConnection { connection in
            try !connection.query("""
                SELECT 1 FROM sign_in_devices WHERE app_id = $1 AND uid = $2 AND token_hash = $3 AND expires_at > now()
                """, [appId, uid, PGParam.bytea(Self.hash(token))]).isEmpty
        }
    }
}
