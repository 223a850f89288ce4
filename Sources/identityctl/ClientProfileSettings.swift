import Foundation
import IdentityKit

/// `identityctl apps settings` flags for how shipped clients reach the app (COMPATIBILITY.md):
/// `--profile`, `--domains`, `--path-prefix`, `--allowed-origins` (an empty value clears a
/// list or the prefix). `--apple-nonce` lives with the provider settings.
enum ClientProfileSettings {
    static func apply(_ arguments: [String], appId: String, store: ClientProfileStore) throws -> ClientProfile {
        var profile = try store.profile(appId: appId)
        let names = ["--profile", "--domains", "--path-prefix", "--allowed-origins"]
        guard names.contains(where: { option($0, in: arguments) != nil }) else { return profile }
        if let shape = option("--profile", in: arguments) {
            guard let value = ClientProfile.Shape(rawValue: shape) else {
                fail("--profile wants \(ClientProfile.Shape.allCases.map(\.rawValue).joined(separator: "|"))")
            }
            profile.shape = value
        }
        if let hosts = list("--domains", arguments) {
            profile.domains = hosts.map { host in
                guard let normalized = ClientProfile.normalizedHost(host) else { fail("--domains: not a host or host:port: \(host)") }
                return normalized
            }
        }
        if let prefix = option("--path-prefix", in: arguments) {
            guard prefix.isEmpty || ClientProfile.isValidPathPrefix(prefix) else {
                fail("--path-prefix wants /segment[/segment…], not under /v1, /api/docs or /.well-known")
            }
            profile.pathPrefix = prefix.isEmpty ? nil : prefix
        }
        if let origins = list("--allowed-origins", arguments) {
            profile.allowedOrigins = origins.map { origin in
                // Exact origins only: a wildcard would let any site call with the user's cookie.
                guard let normalized = ClientProfile.normalizedOrigin(origin), normalized == origin.lowercased() else {
                    fail("--allowed-origins wants exact origins such as https://app.example.com (no path, no wildcard): \(origin)")
                }
                return normalized
            }
        }
        do {
            try store.save(appId: appId, profile)
        } catch StoreError.uniqueViolation {
            fail("--domains: a host is already another app's")
        }
        return profile
    }

    private static func list(_ name: String, _ arguments: [String]) -> [String]? {
        option(name, in: arguments).map { $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty } }
    }

    static func json(_ profile: ClientProfile) -> [String: Any] {
        ["profile": profile.shape.rawValue, "domains": profile.domains, "path_prefix": profile.pathPrefix ?? NSNull(),
         "allowed_origins": profile.allowedOrigins]
    }
}
