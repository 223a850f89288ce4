import Foundation

/// The settings of how clients reach an app (client profile, domains, path prefix, browser
/// origins, Apple's nonce, the passkey relying party), how long its JWKS may be cached, and
/// when failed sign-ins become audit rows. Part of the one `AppSettingsUpdate`, so
/// `identityctl apps settings` and `PATCH /v1/admin/settings` check and write them alike.
extension AppSettingsUpdate {
    /// Problems that need nothing stored; the passkey origins' fit with the relying party,
    /// which may be stored already, is checked in `applyEdge` (IdentityCredentials).
    func edgeProblems() -> [(setting: String, message: String)] {
        var found: [(String, String)] = []
        if let profile, ClientProfile.Shape(rawValue: profile) == nil {
            found.append(("profile", "must be \(ClientProfile.Shape.allCases.map(\.rawValue).joined(separator: ", "))"))
        }
        if let domains, domains.count > 20 || domains.contains(where: { ClientProfile.normalizedHost($0) == nil }) {
            found.append(("domains", "must be at most 20 hosts (host or host:port)"))
        }
        if let prefix = pathPrefix, !prefix.isEmpty, !ClientProfile.isValidPathPrefix(prefix) {
            found.append(("path_prefix", "must be /segment[/segment…], not under /v1, /api/docs or /.well-known"))
        }
        // Exact origins only: a wildcard would let any site call with the user's cookie.
        if let origins = allowedOrigins,
           origins.count > 50 || origins.contains(where: { ClientProfile.normalizedOrigin($0) != $0.lowercased() }) {
            found.append(("allowed_origins", "must be at most 50 exact origins such as https://app.example.com (no path, no wildcard)"))
        }
        if let mode = appleNonce, !["issued", "client", "none"].contains(mode) {
            found.append(("apple_nonce", "must be issued, client or none"))
        }
        if let rpId = webauthnRpId, !WebAuthnSettings.isDomain(rpId) {
            found.append(("webauthn_rp_id", "must be a domain name such as example.com (no scheme, no port)"))
        }
        if let origins = webauthnOrigins, origins.count > 20 {
            found.append(("webauthn_origins", "must be at most 20 origins"))
        }
        if let name = webauthnRpName, name.utf8.count > 256 {
            found.append(("webauthn_rp_name", "must be at most 256 characters"))
        }
        if let seconds = jwksCacheSeconds, !(1...86_400).contains(seconds) {
            found.append(("jwks_cache_seconds", "must be 1 to 86400 seconds"))
        }
        if let threshold = failedSignInAuditThreshold, !(1...1000).contains(threshold) {
            found.append(("failed_sign_in_audit_threshold", "must be 1 to 1000 failures"))
        }
        return found
    }
}
