import Foundation
import IdentityKit

/// Writing an `AppSettingsUpdate` (the token worker's `UpdateAppSettings`, `identityctl apps
/// settings`): the Apple, APNs and FCM secrets are sealed under their sub-keys of the master key
/// and stored, and the settings are answered as they are after the change (secrets only as set
/// or not). Parsing and checking an update (`parse`, `problems`) stay in IdentityKit: the gateway
/// runs them for a 422 before any command, and holds neither the master key nor this code.
extension AppSettingsUpdate {
    /// Writes the update (checked first, the outbound URLs' hosts resolved too: throws
    /// `ServiceError.validationFailed` on problems) and answers the app's settings after it, or
    /// nil when there is no such app. `authority` says who asks (AppSettingsUpdate+Operator.swift):
    /// a tenant is held to the operator's ceilings.
    public func apply(appId: String, pool: PGPool, masterKey: [UInt8]?, offAllowed: Bool,
                      authority: SettingsAuthority) throws -> JSONValue? {
        var problems = problems(offAllowed: offAllowed) + ceilingProblems(authority)
        if problems.isEmpty { problems = outboundLookupProblems() }
        guard problems.isEmpty else {
            throw ServiceError.validationFailed(problems.map { .init(location: "body.\($0.setting)", message: $0.message) })
        }
        let apps = AppStore(pool: pool)
        guard var app = try apps.find(id: appId) else { return nil }
        try checkSharedSmsAccount(appId: appId, pool: pool, authority)
        if let ttl = accessTokenTTL { app = try apps.setAccessTokenTTL(appId: appId, seconds: ttl) ?? app }
        if let seconds = sessionLifetime { try apps.setSessionLifetime(appId: appId, seconds: seconds) }
        if let seconds = sessionIdleTimeout { try apps.setSessionIdleTimeout(appId: appId, seconds: seconds) }
        if let proof = sessionEndProof { try apps.setSessionEndProof(appId: appId, proof) }
        let providerStore = ProviderSettingsStore(pool: pool)
        var (providers, keySet) = try providerStore.settingsWithoutKey(appId: appId)
        if let ids = googleClientIds { providers.googleClientIds = ids }
        if let ids = appleBundleIds { providers.appleBundleIds = ids }
        if let ids = appleServicesIds { providers.appleServicesIds = ids }
        if let team = appleTeamId { providers.appleTeamId = team }
        if let key = appleKeyId { providers.appleKeyId = key }
        if let project = firebaseProjectId { providers.firebaseProjectId = project }
        if let trust = firebaseTrustEmailVerified { providers.firebaseTrustEmailVerified = trust }
        var sealedKey: [UInt8]?
        if let pem = applePrivateKeyPEM {
            guard let masterKey, masterKey.count == 32 else {
                throw ServiceError(code: "auth/internal", status: 500, detail: "The master key is needed to seal the key.")
            }
            sealedKey = try SecretSealer(masterKey: masterKey, purpose: .appleSecretSeal)
                .seal(Array(pem.utf8), associatedData: ProviderSecretAAD.applePrivateKey(appId: appId))
            keySet = true
        }
        try providerStore.saveKeepingKey(appId: appId, providers, sealedKey: sealedKey)
        let push = try applyPush(appId: appId, pool: pool, masterKey: masterKey)
        try sms.apply(appId: appId, pool: pool, masterKey: masterKey)
        let mailStore = MailSettingsStore(pool: pool)
        var mail = try mailStore.settings(appId: appId)
        if let url = deepLinkURL { mail.deepLinkURL = url.isEmpty ? nil : url }
        if let name = mailFromName { mail.fromName = name.isEmpty ? nil : name }
        if let address = mailFromAddress { mail.fromAddress = address.isEmpty ? nil : address }
        if let locale = defaultLocale { mail.defaultLocale = LanguageTag.normalized(locale) }
        for (target, value) in mailTemplates {
            guard let target = Self.templateTarget(target) else { continue }  // `problems` refused it
            // An empty text removes the app's own: the built-in text applies again.
            mail.templates[target.kind, default: [:]][target.part] = value.isEmpty ? nil : value
            if mail.templates[target.kind]?.isEmpty == true { mail.templates[target.kind] = nil }
        }
        try mailStore.save(appId: appId, mail)
        for (name, value) in rateLimits {
            try apps.setRateLimitOverride(appId: appId, name: name, value == "default" ? nil : RateLimitOverride.parse(value))
        }
        if let metadata = defaultMetadata { try apps.setDefaultMetadata(appId: appId, metadata) }
        let edge = try applyEdge(appId: appId, pool: pool, authority: authority)
        return .object(edge.merging(try SmsSettingsUpdate.summary(appId: appId, pool: pool)) { $1 }.merging([
            "app_id": .string(appId),
            "access_token_ttl": JSONValue(app.accessTokenTTL),
            "session_lifetime": JSONValue(try apps.sessionLifetime(appId: appId) ?? 0),
            "session_idle_timeout": JSONValue(try apps.sessionIdleTimeout(appId: appId) ?? 0),
            "session_end_proof": JSONValue(try apps.sessionEndProof(appId: appId) ?? "none"),
            "deep_link_url": JSONValue(mail.deepLinkURL),
            "mail_from_name": JSONValue(mail.fromName),
            "mail_from_address": JSONValue(mail.fromAddress),
            "default_locale": JSONValue(mail.defaultLocale),
            "mail_templates": .object(Self.flatTemplates(mail.templates)),
            "google_client_ids": JSONValue(providers.googleClientIds),
            "apple_bundle_ids": JSONValue(providers.appleBundleIds),
            "apple_services_ids": JSONValue(providers.appleServicesIds),
            "apple_team_id": JSONValue(providers.appleTeamId),
            "apple_key_id": JSONValue(providers.appleKeyId),
            "apple_private_key_set": .bool(keySet),
            "firebase_project_id": JSONValue(providers.firebaseProjectId),
            "firebase_trust_email_verified": .bool(providers.firebaseTrustEmailVerified),
            "apns_team_id": JSONValue(push.apnsTeamId),
            "apns_key_id": JSONValue(push.apnsKeyId),
            "apns_topic": JSONValue(push.apnsTopic),
            "apns_private_key_set": .bool(push.apnsPrivateKeySet),
            "fcm_project_id": JSONValue(push.fcmProjectId),
            "fcm_service_account_set": .bool(push.fcmServiceAccountSet),
            "security_alerts": .bool(push.securityAlerts),
            "rate_limits": .object(Self.effectiveLimits(try apps.rateLimitOverrides(appId: appId)).mapValues { .string($0) }),
            "default_metadata": try apps.defaultMetadata(appId: appId),
        ]) { $1 })
    }

    /// The push part of the update: public fields as given, secrets sealed with the push
    /// sub-key, each bound to the app and its field.
    private func applyPush(appId: String, pool: PGPool, masterKey: [UInt8]?) throws -> PushSettings {
        let store = PushSettingsStore(pool: pool)
        var push = try store.settings(appId: appId)
        let nothingAsked = apnsTeamId == nil && apnsKeyId == nil && apnsTopic == nil && apnsPrivateKeyPEM == nil
            && fcmServiceAccountJSON == nil && securityAlerts == nil
        if nothingAsked { return push }
        if let team = apnsTeamId { push.apnsTeamId = team.isEmpty ? nil : team }
        if let key = apnsKeyId { push.apnsKeyId = key.isEmpty ? nil : key }
        if let topic = apnsTopic { push.apnsTopic = topic.isEmpty ? nil : topic }
        if let alerts = securityAlerts { push.securityAlerts = alerts }
        var sealedAPNs: [UInt8]?
        var sealedFCM: [UInt8]?
        if apnsPrivateKeyPEM != nil || fcmServiceAccountJSON != nil {
            guard let masterKey, masterKey.count == 32 else {
                throw ServiceError(code: "auth/internal", status: 500, detail: "The master key is needed to seal the key.")
            }
            let sealer = SecretSealer(masterKey: masterKey, purpose: .pushCredentialSeal)
            if let pem = apnsPrivateKeyPEM {
                sealedAPNs = try sealer.seal(Array(pem.utf8), associatedData: PushSecretAAD.apnsPrivateKey(appId: appId))
                push.apnsPrivateKeySet = true
            }
            if let json = fcmServiceAccountJSON, let account = FCMServiceAccount.parse(json) {
                sealedFCM = try sealer.seal(Array(json.utf8), associatedData: PushSecretAAD.fcmServiceAccount(appId: appId))
                push.fcmProjectId = account.projectId
                push.fcmServiceAccountSet = true
            }
        }
        try store.save(appId: appId, push, sealedAPNsKey: sealedAPNs, sealedFCMServiceAccount: sealedFCM)
        return push
    }

    /// The app's texts as `mail_templates` takes them: `KIND.PART[.LANGUAGE]` → text.
    static func flatTemplates(_ templates: [String: [String: String]]) -> [String: JSONValue] {
        var flat: [String: JSONValue] = [:]
        for (kind, parts) in templates {
            for (part, text) in parts { flat[kind + "." + part] = .string(text) }
        }
        return flat
    }

    /// Every limit's effective setting: `"100/60s"` or `"off"`.
    static func effectiveLimits(_ overrides: [String: JSONValue]) -> [String: String] {
        var effective: [String: String] = [:]
        for policy in RateLimitCatalogue.all {
            switch overrides[policy.name] {
            case .string("off")?:
                effective[policy.name] = "off"
            case .object(let setting)?:
                if case .number(let count)? = setting["count"], case .number(let window)? = setting["window"] {
                    effective[policy.name] = "\(Int(count))/\(Int(window))s"
                }
            default:
                effective[policy.name] = "\(policy.count)/\(Int(policy.window))s"
            }
        }
        return effective
    }

    // The edge settings (their rules: IdentityKit's AppSettingsUpdate+Edge.swift).

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
