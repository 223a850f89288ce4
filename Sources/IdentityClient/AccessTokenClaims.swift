import Foundation

/// What the client reads from its own access token's payload, decoded without verifying the
/// signature: the client only decides when to refresh and what to show; the service and your
/// backend verify the token.
struct AccessTokenClaims: Sendable, Equatable {
    var sub: String?
    var sid: String?
    var iat: Date?
    var exp: Date?
    var amr: [String] = []
    /// Authenticator assurance level (1 or 2); read from `2` or `"aal2"` alike.
    var aal: Int?
    var isGuest = false
    var roles: [String] = []

    /// The payload of a compact JWS (`header.payload.signature`), or nil when `token` is not one.
    init?(token: String) {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let data = Base64URL.decode(String(parts[1])),
              let payload = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else { return nil }
        func seconds(_ key: String) -> Date? {
            (payload[key] as? NSNumber).map { Date(timeIntervalSince1970: $0.doubleValue) }
        }
        sub = payload["sub"] as? String
        sid = payload["sid"] as? String
        iat = seconds("iat")
        exp = seconds("exp")
        amr = payload["amr"] as? [String] ?? []
        if let level = payload["aal"] as? Int {
            aal = level
        } else if let level = payload["aal"] as? String, level.hasPrefix("aal") {
            aal = Int(level.dropFirst(3))
        }
        isGuest = payload["is_guest"] as? Bool ?? false
        roles = payload["roles"] as? [String] ?? []
    }
}

/// When an access token stops being worth sending, by this device's clock.
///
/// The token's `exp` is the service's clock; a device clock that is off by minutes would refresh
/// on every call (ahead) or send expired tokens (behind). So the expiry is taken as the moment
/// the token arrived plus its lifetime (`exp - iat`, else the answer's `expires_in`), and the
/// token's own `exp` only when the two clocks roughly agree (the earlier of both then).
struct AccessTokenExpiry: Sendable, Equatable {
    /// Refresh this long before expiry: a call started now still arrives with a live token.
    static let refreshMargin: TimeInterval = 60
    /// Clocks further apart than this are not trusted to agree.
    static let clockAgreement: TimeInterval = 300

    /// When the client received the token (device clock).
    let obtainedAt: Date
    /// When the token expires (device clock).
    let expiresAt: Date

    init(obtainedAt: Date, expiresAt: Date) {
        self.obtainedAt = obtainedAt
        self.expiresAt = expiresAt
    }

    /// Nil when neither the token nor the answer says how long it lives (the service then
    /// decides: a refused token is refreshed and the call retried).
    init?(claims: AccessTokenClaims?, expiresIn: Int?, obtainedAt: Date) {
        let lifetime: TimeInterval?
        if let exp = claims?.exp, let iat = claims?.iat, exp > iat {
            lifetime = exp.timeIntervalSince(iat)
        } else {
            lifetime = expiresIn.map(TimeInterval.init)
        }
        var expiry = lifetime.map { obtainedAt.addingTimeInterval($0) }
        if let exp = claims?.exp {
            if let estimate = expiry {
                if abs(exp.timeIntervalSince(estimate)) < Self.clockAgreement { expiry = min(estimate, exp) }
            } else {
                expiry = exp
            }
        }
        guard let expiry else { return nil }
        self.init(obtainedAt: obtainedAt, expiresAt: expiry)
    }

    /// True when the token has expired or expires within the margin (at most half its
    /// lifetime, so a short-lived token is not refreshed on every call).
    func needsRefresh(at now: Date) -> Bool {
        let lifetime = max(0, expiresAt.timeIntervalSince(obtainedAt))
        let margin = min(Self.refreshMargin, lifetime / 2)
        return now >= expiresAt.addingTimeInterval(-margin)
    }

    /// True once the token's lifetime is over (it would be refused).
    func isExpired(at now: Date) -> Bool { now >= expiresAt }
}
