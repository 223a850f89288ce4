import IdentityKit

/// One-time 6-digit codes mailed for sign-in, password reset and email verification. Only an
/// HMAC of each code is stored (keyed with a server secret, so a leaked table cannot be
/// brute-forced offline over the million codes), compared in constant time. A code lives
/// `lifetime` seconds, dies after 5 wrong guesses, and is replaced by a newer send. Guesses are
/// also counted per address, whatever the number of codes sent (`code_guess_per_address`,
/// 20 an hour by default): a new send must not buy a new round of guesses.
public struct VerificationCodeStore: Sendable {
    public enum Purpose: String, Sendable {
        case emailCode = "email_code"
        case passwordReset = "password_reset"
        case emailVerification = "email_verification"
        /// The email second factor (enrolment and sign-in challenges).
        case mfaEmail = "mfa_email"
        /// The SMS second factor (the target is the account's verified E.164 number).
        case mfaSms = "mfa_sms"
        /// Phone sign-in (the target is the E.164 number; reached by a session id).
        case phoneCode = "phone_code"
        /// Linking a number to a signed-in user (the row also names the user).
        case phoneLink = "phone_link"
        /// A signed-in user's new email address (the row also names the user; one per user).
        case emailChange = "email_change"
    }

    public enum Check: Sendable, Equatable {
        case valid, invalid, expired
        /// The address has used up its guesses: refused without looking at the code.
        case limited([RateLimitStore.Status])
    }

    public static let maximumAttempts = 5

    let key: [UInt8]

    public init(key: [UInt8]) { self.key = key }

    /// A fresh random code of 6 digits (uniform: rejection sampling, no modulo bias).
    public static func newCode() -> String {
        while true {
            let bytes = SecureRandom.bytes(4)
            let value = bytes.reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            if value < 4_294_000_000 {  // a multiple of 1 000 000
                let number = Int(value % 1_000_000)
                return String(repeating: "0", count: 6 - String(number).count) + String(number)
            }
        }
    }

    private func mac(_ code: String) -> [UInt8] { Digest.hmacSHA256(key: key, Array(code.utf8)) }

    /// Stores `code` for (purpose, email), replacing an older one. Phone codes (`email` is then
    /// the E.164 number) also carry the session id that reaches them, and link codes the user.
    public func store(_ code: String, purpose: Purpose, appId: String, email: String, lifetimeSeconds: Int,
                      sessionId: String? = nil, uid: String? = nil, on connection: PGConnection) throws {
        try connection.query("""
            INSERT INTO verification_codes (app_id, purpose, email_lower, code_hmac, expires_at, session_id, uid)
            VALUES ($1, $2, lower($3), $4, now() + make_interval(secs => $5), $6, $7)
            ON CONFLICT (app_id, purpose, email_lower) DO UPDATE
            SET code_hmac = EXCLUDED.code_hmac, attempts = 0, created_at = now(), expires_at = EXCLUDED.expires_at,
                session_id = EXCLUDED.session_id, uid = EXCLUDED.uid
            """, [appId, purpose.rawValue, email, PGParam.bytea(mac(code)), String(lifetimeSeconds), sessionId, uid])
    }

    /// The target (and, for link codes, the user) of the code a session id reaches, if any.
    public func target(sessionId: String, purpose: Purpose, appId: String,
                       on connection: PGConnection) throws -> (target: String, uid: String?)? {
        try connection.query("""
            SELECT email_lower, uid FROM verification_codes WHERE app_id = $1 AND purpose = $2 AND session_id = $3
            """, [appId, purpose.rawValue, sessionId]).first.map { (try $0.string("email_lower"), try $0.optionalString("uid")) }
    }

    /// The target of the code of `purpose` stored for `uid`, if one is (a pending email change).
    public func pending(purpose: Purpose, appId: String, uid: String, on connection: PGConnection) throws -> String? {
        try connection.query("""
            SELECT email_lower FROM verification_codes WHERE app_id = $1 AND purpose = $2 AND uid = $3
            ORDER BY created_at DESC LIMIT 1
            """, [appId, purpose.rawValue, uid]).first?.optionalString("email_lower")
    }

    /// Deletes the codes of `purpose` stored for `uid`: a user has one pending change at a time.
    public func discard(purpose: Purpose, appId: String, uid: String, on connection: PGConnection) throws {
        try connection.query("DELETE FROM verification_codes WHERE app_id = $1 AND purpose = $2 AND uid = $3",
                             [appId, purpose.rawValue, uid])
    }

    /// Seconds since the last code for (purpose, email) was stored, if one exists.
    public func secondsSinceLastSend(purpose: Purpose, appId: String, email: String,
                                     on connection: PGConnection) throws -> Int? {
        try connection.query("""
            SELECT floor(extract(epoch FROM now() - created_at))::int AS age FROM verification_codes
            WHERE app_id = $1 AND purpose = $2 AND email_lower = lower($3)
            """, [appId, purpose.rawValue, email]).first.map { try $0.int("age") }
    }

    /// Checks a guess in the caller's transaction. A wrong guess is counted (and the fifth
    /// deletes the code), so callers commit even when the answer is `.invalid`. `spend`
    /// deletes a valid code.
    public func check(_ code: String, purpose: Purpose, appId: String, email: String, spend: Bool,
                      on connection: PGConnection) throws -> Check {
        // Every guess is charged to the address first, atomically (parallel guesses cannot
        // slip past the budget), and a right one is given back: only wrong guesses count, and
        // past the budget even the right code is refused until the window passes.
        let budget = RateLimitStore.Check(RateLimitCatalogue.codeGuessPerAddress,
                                          subject: RateLimitStore.hashedSubject(email))
        let statuses = try RateLimitStore.take(appId: appId, [budget], on: connection)
        if let last = statuses.last, last.refused { return .limited(statuses) }
        let check = try compare(code, purpose: purpose, appId: appId, email: email, spend: spend, on: connection)
        if check == .valid { try RateLimitStore.refund(appId: appId, budget, on: connection) }
        return check
    }

    private func compare(_ code: String, purpose: Purpose, appId: String, email: String, spend: Bool,
                         on connection: PGConnection) throws -> Check {
        guard let row = try connection.query("""
            SELECT code_hmac, expires_at <= now() AS expired, attempts FROM verification_codes
            WHERE app_id = $1 AND purpose = $2 AND email_lower = lower($3) FOR UPDATE
            """, [appId, purpose.rawValue, email]).first else { return .invalid }
        let scope: [String?] = [appId, purpose.rawValue, email]
        if try row.bool("expired") { return .expired }
        if try Digest.constantTimeEqual(row.bytes("code_hmac"), mac(code)) {
            if spend {
                try connection.query("""
                    DELETE FROM verification_codes WHERE app_id = $1 AND purpose = $2 AND email_lower = lower($3)
                    """, scope)
            }
            return .valid
        }
        if try row.int("attempts") + 1 >= Self.maximumAttempts {
            try connection.query("""
                DELETE FROM verification_codes WHERE app_id = $1 AND purpose = $2 AND email_lower = lower($3)
                """, scope)
        } else {
            try connection.query("""
                UPDATE verification_codes SET attempts = attempts + 1
                WHERE app_id = $1 AND purpose = $2 AND email_lower = lower($3)
                """, scope)
        }
        return .invalid
    }
}
