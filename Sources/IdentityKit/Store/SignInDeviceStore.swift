/// Device tokens of password sign-ins (migration 0031; OWASP's "device cookies"): what keeps a
/// guesser who spent an identifier's sign-in budget from locking its owner out. A successful
/// password sign-in answers with `dt_` + 256 bits, of which only the SHA-256 is kept for the app
/// and user; the client sends it back as `X-Device-Token`. Once `sign_in_per_identifier` is
/// spent, the gateway counts a sign-in with a live token of that identifier's user against
/// `sign_in_per_device` for that device instead (`RateLimitStep`). The token opens nothing by
/// itself: it only buys its device guesses of its own, so a stolen one is worth what that
/// device's budget is. Issuing and finding stored tokens (which read `sign_in_devices.token_hash`)
/// is the token worker's part, in IdentityCredentials (`SignInDeviceStore+Issue.swift`).
public struct SignInDeviceStore: Sendable {
    public static let prefix = "dt_"

    package let pool: PGPool

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
}
