import Foundation

/// How an app's shipped clients reach the service (COMPATIBILITY.md): the shape its edge
/// speaks, the hosts that select it without `X-App-Key`, an extra path prefix and the browser
/// origins it allows. Read by the gateway's edge only; the core flows never look at it.
public struct ClientProfile: Sendable, Equatable {
    public enum Shape: String, Sendable, CaseIterable {
        case standard
        case singleToken = "single-token"
        case sessionObject = "session-object"
    }

    public var shape: Shape = .standard
    public var domains: [String] = []
    /// Answered as well as `/v1` (seed 000: `/api/v2`); nil: `/v1` only.
    public var pathPrefix: String?
    public var allowedOrigins: [String] = []

    public init() {}

    /// A host as `Host` carries it, lower-cased; host or host:port, nothing else.
    public static func normalizedHost(_ host: String) -> String? {
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
            profile.domains = try connection.query("SELECT host FROM app_domains WHERE app_id = $1 ORDER BY host", [appId])
                .map { try $0.string("host") }
            return profile
        }
    }

    /// The app a host selects, if any.
    public func appId(forHost host: String) throws -> String? {
        try pool.withConnection { connection in
            try connection.query("SELECT app_id FROM app_domains WHERE host = $1", [host]).first?.string("app_id")
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

    /// Replaces the app's profile and domains in one transaction; a host another app holds
    /// fails on the primary key.
    public func save(appId: String, _ profile: ClientProfile) throws {
        try pool.transaction { connection in
                _ = try connection.query("""
                    INSERT INTO app_client_profiles (app_id, profile, path_prefix, allowed_origins, updated_at)
                    VALUES ($1, $2, $3, $4, now())
                    ON CONFLICT (app_id) DO UPDATE SET profile = EXCLUDED.profile, path_prefix = EXCLUDED.path_prefix,
                        allowed_origins = EXCLUDED.allowed_origins, updated_at = now()
                    """, [appId, profile.shape.rawValue, profile.pathPrefix, PGParam.textArray(profile.allowedOrigins)])
                _ = try connection.query("DELETE FROM app_domains WHERE app_id = $1", [appId])
                for host in profile.domains {
                    _ = try connection.query("INSERT INTO app_domains (host, app_id) VALUES ($1, $2)", [host, appId])
                }
        }
    }
}
