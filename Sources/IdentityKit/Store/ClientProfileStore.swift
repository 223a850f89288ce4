import Foundation

/// How an app's shipped clients reach the service (docs/client-profiles.md, "App settings"): the
/// shape its edge speaks, the hosts that select it without `X-App-Key`, an extra path prefix and
/// the browser origins it allows. Read by the gateway's edge only; the core flows never look at it.
public struct ClientProfile: Sendable, Equatable {
    public enum Shape: String, Sendable, CaseIterable {
        case standard
        case singleToken = "single-token"
        case sessionObject = "session-object"
    }

    public var shape: Shape = .standard
    /// Every host the app lists, verified or only requested (`AppDomainStore`).
    public var domains: [String] = []
    /// The requested hosts that are not verified yet (they select nothing), each with the token
    /// its verification file must hold.
    public var pendingDomains: [String: String] = [:]
    /// Answered as well as `/v1` (seed 000: `/api/v2`); nil: `/v1` only.
    public var pathPrefix: String?
    public var allowedOrigins: [String] = []

    public init() {}

    /// A host as `Host` carries it, lower-cased; host or host:port, nothing else.
    public static func normalizedHost(_ host: String) -> String? {
        let bytes = Array(host.utf8)
        if bytes.allSatisfy(isPlainHostByte) { return plainHost(bytes) }
        let lowered = TextScanning.trimmed(host).lowercased()
        guard !lowered.isEmpty, lowered.utf8.count <= 260 else { return nil }
        let parts = lowered.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count <= 2, !parts[0].isEmpty,
              parts[0].allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "-") })
        else { return nil }
        if parts.count == 2 {
            guard let port = Int(parts[1]), (1...65_535).contains(port), parts[1].allSatisfy(\.isASCII) else { return nil }
        }
        return lowered
    }

    /// `normalizedHost` of a Host made of ASCII letters, digits, dots, hyphens and colons only
    /// (nothing to trim), decided on its bytes: the same answer without Unicode properties, for
    /// every request that names its app by Host.
    private static func plainHost(_ bytes: [UInt8]) -> String? {
        guard !bytes.isEmpty, bytes.count <= 260 else { return nil }
        let colons = bytes.indices.filter { bytes[$0] == UInt8(ascii: ":") }
        guard colons.count <= 1, (colons.first ?? bytes.count) > 0 else { return nil }
        if let colon = colons.first {
            guard let port = Int(String(decoding: bytes[(colon + 1)...], as: UTF8.self)), (1...65_535).contains(port) else {
                return nil
            }
        }
        return String(decoding: bytes.map { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) ? $0 + 32 : $0 }, as: UTF8.self)
    }

    private static func isPlainHostByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "."), UInt8(ascii: "-"), UInt8(ascii: ":"): true
        default: false
        }
    }

    /// An origin as browsers send it: `scheme://host[:port]`, http or https, no path.
    public static func normalizedOrigin(_ origin: String) -> String? {
        let lowered = origin.lowercased()
        for scheme in ["https://", "http://"] where lowered.hasPrefix(scheme) {
            guard let host = normalizedHost(String(lowered.dropFirst(scheme.count))) else { return nil }
            return scheme + host
        }
        return nil
    }

    /// `/seg[/seg…]`, not under `/v1` and not the service's own `/api/docs` or `/.well-known`.
    public static func isValidPathPrefix(_ prefix: String) -> Bool {
        let segments = prefix.split(separator: "/", omittingEmptySubsequences: false)
        guard prefix.hasPrefix("/"), segments.count >= 2, prefix.utf8.count <= 64 else { return false }
        let segmentOK = segments.dropFirst().allSatisfy { segment in
            !segment.isEmpty && segment.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "._~-".contains($0)) }
        }
        return segmentOK && !["v1", ".well-known", "healthz", "readyz"].contains(String(segments[1]))
            && !(prefix == "/api/docs" || prefix.hasPrefix("/api/docs/"))
    }
}

public struct ClientProfileStore: Sendable {
    let pool: PGPool

    public init(pool: PGPool) { self.pool = pool }

    public func profile(appId: String) throws -> ClientProfile {
        try pool.withConnection { connection in
            var profile = ClientProfile()
            if let row = try connection.query("""
                SELECT profile, path_prefix, allowed_origins FROM app_client_profiles WHERE app_id = $1
                """, [appId]).first {
                profile.shape = ClientProfile.Shape(rawValue: try row.string("profile")) ?? .standard
                profile.pathPrefix = try row.optionalString("path_prefix")
                profile.allowedOrigins = try row.stringArray("allowed_origins")
            }
            let domains = try AppDomainStore.domains(appId: appId, on: connection)
            profile.domains = domains.map(\.host)
            for domain in domains where !domain.verified { profile.pendingDomains[domain.host] = domain.token ?? "" }
            return profile
        }
    }

    /// The app a host selects, if any: only a verified host selects one (a request is a tenant's
    /// claim, not a proof).
    public func appId(forHost host: String) throws -> String? {
        try pool.withConnection { connection in
            try connection.query("SELECT app_id FROM app_domains WHERE host = $1 AND verified_at IS NOT NULL", [host])
                .first?.string("app_id")
        }
    }

    /// Whether some app allows this origin (a preflight carries no app key).
    public func isAllowedByAnyApp(origin: String) throws -> (allowed: Bool, credentials: Bool) {
        try pool.withConnection { connection in
            let rows = try connection.query("""
                SELECT profile FROM app_client_profiles WHERE allowed_origins @> ARRAY[$1]::text[]
                """, [origin])
            return (!rows.isEmpty, try rows.contains { try $0.string("profile") == ClientProfile.Shape.sessionObject.rawValue })
        }
    }

    /// Replaces the app's profile and, when `domains` is given, its domain list, in one
    /// transaction; a host the operator allows that is verified for another app fails on the
    /// unique index (`StoreError.uniqueViolation`). `profile.domains` is not read here.
    public func save(appId: String, _ profile: ClientProfile, domains: AppDomainStore.Change? = nil) throws {
        try pool.transaction { connection in
                _ = try connection.query("""
                    INSERT INTO app_client_profiles (app_id, profile, path_prefix, allowed_origins, updated_at)
                    VALUES ($1, $2, $3, $4, now())
                    ON CONFLICT (app_id) DO UPDATE SET profile = EXCLUDED.profile, path_prefix = EXCLUDED.path_prefix,
                        allowed_origins = EXCLUDED.allowed_origins, updated_at = now()
                    """, [appId, profile.shape.rawValue, profile.pathPrefix, PGParam.textArray(profile.allowedOrigins)])
                if let domains { try AppDomainStore.apply(domains, appId: appId, on: connection) }
        }
    }
}
