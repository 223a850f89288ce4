import IdentityKit

/// Failed sign-ins past the app's threshold become audit rows `security.sign_in_failures`
/// (issue 16: "every security event … sign-in failures past a threshold"): per account and per
/// client IP, counted over 15 minutes, a row at the threshold (default 5,
/// `failed_sign_in_audit_threshold`) and at each doubling after it. The counting and the rows
/// are one SQL call (`sign_in_failure_note`, migration 0023), the same call whether or not the
/// account exists, so its cost tells a guesser nothing. A failure to count is logged and never
/// changes the caller's answer.
struct SignInFailureAudit: Sendable {
    let pool: PGPool

    static let windowSeconds = 900

    /// `uid`: the account the failure was against, nil when none matched the identifier.
    func note(appId: String, uid: String?, method: String, ip: String?, requestId: String) {
        do {
            try pool.withConnection { try note(appId: appId, uid: uid, method: method, ip: ip, requestId: requestId, on: $0) }
        } catch {
            Log.error("sign-in failure not counted", ["app_id": appId, "error": String(describing: error)])
        }
    }

    /// Inside the caller's transaction (a wrong MFA code is counted with the challenge's failure).
    func note(appId: String, uid: String?, method: String, ip: String?, requestId: String,
              on connection: PGConnection) throws {
        let address = ip.flatMap { $0.isEmpty ? nil : $0 }
        let rows = try connection.query("""
            SELECT sign_in_failure_note($1, ARRAY[$2, $3]::text[], $4::integer, $5, $6, $7) AS written
            """, [appId, uid.map { "user:" + $0 }, address.map { "ip:" + $0 }, String(Self.windowSeconds), method,
                  address ?? "", requestId])
        if let written = try rows.first?.int("written"), written > 0 {
            Log.warning("sign-in failures past the threshold: audited", ["app_id": appId, "method": method])
        }
    }
}
