import Foundation
import IdentityKit

/// `apps settings … --webauthn-rp-id ID --webauthn-origins O,O [--webauthn-rp-name NAME]
/// [--webauthn-require-uv true|false]`: an app's passkey relying party.
enum WebAuthnSettingsOptions {
    /// Applies the options present in `arguments` (none: nothing changes) and returns the
    /// settings now in force, for the command's JSON output.
    static func apply(_ arguments: [String], appId: String, pool: PGPool) throws -> [String: Any] {
        let store = PasskeyStore(pool: pool)
        let current = try store.settings(appId: appId)
        let rpId = option("--webauthn-rp-id", in: arguments)
        let origins = option("--webauthn-origins", in: arguments).map { $0.split(separator: ",").map(String.init) }
        let rpName = option("--webauthn-rp-name", in: arguments)
        let requireUV = option("--webauthn-require-uv", in: arguments)
        guard rpId != nil || origins != nil || rpName != nil || requireUV != nil else { return describe(current) }
        var settings = current ?? WebAuthnSettings(rpId: "")
        if let rpId {
            guard isDomain(rpId) else { fail("--webauthn-rp-id must be a domain name such as example.com (no scheme, no port)") }
            settings.rpId = rpId
        }
        guard !settings.rpId.isEmpty else { fail("passkey settings need --webauthn-rp-id") }
        if let origins { settings.origins = origins }
        for origin in settings.origins {
            if let problem = problem(origin: origin, rpId: settings.rpId) { fail("--webauthn-origins: \(origin): \(problem)") }
        }
        if let rpName { settings.rpName = rpName.isEmpty ? nil : rpName }
        if let requireUV {
            guard requireUV == "true" || requireUV == "false" else { fail("--webauthn-require-uv wants true or false") }
            settings.requireUserVerification = requireUV == "true"
        }
        try store.save(appId: appId, settings)
        return describe(settings)
    }

    static func describe(_ settings: WebAuthnSettings?) -> [String: Any] {
        guard let settings else { return ["webauthn_rp_id": NSNull()] }
        return ["webauthn_rp_id": settings.rpId, "webauthn_rp_name": settings.rpName ?? NSNull(),
                "webauthn_origins": settings.origins, "webauthn_require_uv": settings.requireUserVerification]
    }

    static func isDomain(_ text: String) -> Bool {
        let labels = text.split(separator: ".", omittingEmptySubsequences: false)
        return !text.isEmpty && text.count <= 253 && text == text.lowercased() && labels.allSatisfy { label in
            !label.isEmpty && label.count <= 63 && !label.hasPrefix("-") && !label.hasSuffix("-")
                && label.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }
        }
    }

    /// Why an origin cannot be used with `rpId`, or nil. Web origins are `https://host[:port]`
    /// whose host is the rp id or under it (WebAuthn's rule; `http://localhost` for
    /// development); native Android apps sign as `android:apk-key-hash:<base64url SHA-256>`.
    static func problem(origin: String, rpId: String) -> String? {
        if origin.hasPrefix("android:apk-key-hash:") {
            let hash = origin.dropFirst("android:apk-key-hash:".count)
            return Base64URL.decode(hash)?.count == 32 ? nil : "the hash must be a base64url SHA-256 (43 characters)"
        }
        guard let url = URLComponents(string: origin), let scheme = url.scheme, let host = url.host,
              url.path.isEmpty, url.query == nil, url.fragment == nil, url.user == nil
        else { return "must be scheme://host[:port] with no path" }
        guard scheme == "https" || (scheme == "http" && host == "localhost") else {
            return "must be https (http only for localhost)"
        }
        guard host == rpId || host.hasSuffix("." + rpId) else { return "its host is not \(rpId) or under it" }
        return nil
    }
}
