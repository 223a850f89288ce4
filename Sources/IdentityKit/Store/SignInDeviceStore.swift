/// Device tokens of password sign-ins (migration 0031; OWASP's "device cookies"): what keeps a
/// guesser who spent an identifier's sign-in budget from locking its owner out. A successful
/// password sign-in answers with `dt_` + 256 bits, of which only the SHA-256 is kept for the app
/// and user; the client sends it back as `X-Device-Token`. Once `sign_in_per_identifier` is
/// spent, the gateway counts a sign-in with a live token of that identifier's user against
/// `sign_in_per_device` for that device instead (`RateLimitStep`). The token opens nothing by
/// itself: it only buys its device guesses of its own, so a stolen one is worth what that
/// device's budget is.
public struct SignInDeviceStore: Sendable {
    public static let prefix = "dt_"
    /// How long a device token counts when its device does not sign in again.
    public static let lifetimeSeconds = 90 * 86_400
    /// Tokens kept per user (the newest): a user does not sign in from more devices than this
    /// within 90 days, and a flood of sign-ins cannot grow the table.
    public static let keptPerUser = 10

    let pool: PGPool

    public init(pool: PGPool) { self.pool = pool }

    /// A header value shaped like a device token (anything else is never looked up).
    public static func isDeviceToken(_ token: String) -> Bool {
        token.hasPrefix(prefix) && (40...128).contains(token.utf8.count)
    }

    public static func hash(_ token: String) -> [UInt8] { Digest.sha256(token) }

    /// Whether `token` is a live device token of the user `identifier` names in this app (the
    /// gateway, through `sign_in_device_known`, which shows it no hash and no user).
    public func isKnown(appId: String, identifier: String, token: String) throws -> Bool {
        guard Self.isDeviceToken(token), !identifier.isEmpty, identifier.utf8.count <= 254 else { return false }
        return try pool.withConnection { connection in
            try connection.query("SELECT sign_in_device_known($1, $2, $3) AS known",
                                 [appId, identifier, PGParam.bytea(Self.hash(token))]).first?.bool("known") ?? false
        }
    }

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
