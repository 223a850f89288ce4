import Foundation

/// The settings of how clients reach an app (client profile, domains, path prefix, browser
/// origins, Apple's nonce, the passkey relying party), how long its JWKS may be cached, and
/// when failed sign-ins become audit rows. Part of the one `AppSettingsUpdate`, so
/// `identityctl apps settings` and `PATCH /v1/admin/settings` check and write them alike.
extension AppSettingsUpdate {
    /// Problems that need nothing stored; the passkey origins' fit with the relying party,
    /// which may be stored already, is checked in `applyEdge`.
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

    private func invalid(_ setting: String, _ message: String) -> ServiceError {
        .validationFailed([.init(location: "body.\(setting)", message: message)])
    }

    /// Writes the edge settings present and answers all of them as they are now.
    /// A tenant's domains are only requested (they select the app once verified: AppDomainStore);
    /// the operator's are allowed at once.
    func applyEdge(appId: String, pool: PGPool, authority: SettingsAuthority) throws -> [String: JSONValue] {
        let profiles = ClientProfileStore(pool: pool)
        var profile = try profiles.profile(appId: appId)
        if self.profile != nil || domains != nil || pathPrefix != nil || allowedOrigins != nil {
            if let shape = self.profile.flatMap(ClientProfile.Shape.init(rawValue:)) { profile.shape = shape }
            let hosts = domains.map { Array(Set($0.compactMap(ClientProfile.normalizedHost))).sorted() }
            if let pathPrefix { profile.pathPrefix = pathPrefix.isEmpty ? nil : pathPrefix }
            if let allowedOrigins { profile.allowedOrigins = allowedOrigins.compactMap(ClientProfile.normalizedOrigin) }
            do {
                try profiles.save(appId: appId, profile,
                                  domains: hosts.map { authority.isTenant ? .request($0) : .allow($0) })
            } catch StoreError.uniqueViolation {
                // Only the operator's allowance can meet another app's verified host (a request
                // conflicts with nothing), and the operator may know that much.
                throw invalid("domains", "a host is already another app's")
            }
            profile = try profiles.profile(appId: appId)
        }
        let passkeys = PasskeyStore(pool: pool)
        var relyingParty = try passkeys.settings(appId: appId)
        if webauthnRpId != nil || webauthnOrigins != nil || webauthnRpName != nil || webauthnRequireUV != nil {
            var settings = relyingParty ?? WebAuthnSettings(rpId: "")
            if let webauthnRpId { settings.rpId = webauthnRpId }
            guard !settings.rpId.isEmpty else { throw invalid("webauthn_rp_id", "is needed before the other passkey settings") }
            if let webauthnOrigins { settings.origins = webauthnOrigins }
            for origin in settings.origins {
                if let problem = WebAuthnSettings.problem(origin: origin, rpId: settings.rpId) {
                    throw invalid("webauthn_origins", "\(origin): \(problem)")
                }
            }
            if let webauthnRpName { settings.rpName = webauthnRpName.isEmpty ? nil : webauthnRpName }
            if let webauthnRequireUV { settings.requireUserVerification = webauthnRequireUV }
            try passkeys.save(appId: appId, settings)
            relyingParty = settings
        }
        let apps = AppStore(pool: pool)
        if let appleNonce { try ProviderSettingsStore(pool: pool).setAppleNonceMode(appId: appId, appleNonce) }
        if let jwksCacheSeconds { try apps.signingKeys.setJWKSCacheSeconds(appId: appId, seconds: jwksCacheSeconds) }
        if let failedSignInAuditThreshold {
            try apps.setFailedSignInAuditThreshold(appId: appId, failedSignInAuditThreshold)
        }
        return [
            "profile": .string(profile.shape.rawValue),
            "domains": JSONValue(profile.domains),
            "domains_pending": .object(profile.pendingDomains.mapValues { .string($0) }),
            "path_prefix": JSONValue(profile.pathPrefix),
            "allowed_origins": JSONValue(profile.allowedOrigins),
            "apple_nonce": .string(try ProviderSettingsStore(pool: pool).appleNonceMode(appId: appId)),
            "webauthn_rp_id": JSONValue(relyingParty?.rpId),
            "webauthn_rp_name": JSONValue(relyingParty?.rpName),
            "webauthn_origins": JSONValue(relyingParty?.origins ?? []),
            "webauthn_require_uv": .bool(relyingParty?.requireUserVerification ?? false),
            "jwks_cache_seconds": JSONValue(try apps.signingKeys.jwksCacheSeconds(appId: appId) ?? 0),
            "failed_sign_in_audit_threshold": JSONValue(try apps.failedSignInAuditThreshold(appId: appId)),
        ]
    }
}
