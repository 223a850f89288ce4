import Foundation

/// The rules of an app's passkey relying party, checked wherever it is set (`AppSettingsUpdate`).
extension WebAuthnSettings {
    /// A relying-party id: a lower-case domain name (no scheme, no port).
    public static func isDomain(_ text: String) -> Bool {
        let labels = text.split(separator: ".", omittingEmptySubsequences: false)
        return !text.isEmpty && text.count <= 253 && text == text.lowercased() && labels.allSatisfy { label in
            !label.isEmpty && label.count <= 63 && !label.hasPrefix("-") && !label.hasSuffix("-")
                && label.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }
        }
    }

    /// Why an origin cannot be used with `rpId`, or nil. Web origins are `https://host[:port]`
    /// whose host is the rp id or under it (WebAuthn's rule; `http://localhost` for
    /// development); native Android apps sign as `android:apk-key-hash:<base64url SHA-256>`.
    public static func problem(origin: String, rpId: String) -> String? {
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
