/// URLs of the identity providers (JWKS, Apple's token and revoke endpoints): the keys that
/// decide who may sign in come from them, so they are `https` only. Tests point them at local
/// stand-ins over plain HTTP with `IDENTITY_ALLOW_INSECURE_PROVIDER_URLS=1`.
extension EnvironmentReader {
    public mutating func providerURL(_ name: String, default fallback: String) -> String {
        let value = string(name, default: fallback)
        let insecureAllowed = string("IDENTITY_ALLOW_INSECURE_PROVIDER_URLS", default: "") == "1"
        if !value.lowercased().hasPrefix("https://"), !(insecureAllowed && value.lowercased().hasPrefix("http://")) {
            fail("\(name)=\(value) must be an https:// URL (plain http only with IDENTITY_ALLOW_INSECURE_PROVIDER_URLS=1, for tests)")
        }
        return value
    }
}
