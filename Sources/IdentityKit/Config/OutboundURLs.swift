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

    /// Where URLs that apps set may lead (`OutboundAddressPolicy`): every process reads it, as
    /// the gateway and the token worker check them at save and the mailer at connect. Both
    /// allowances are for tests, whose stand-ins listen on loopback over plain HTTP.
    public mutating func outboundAddressPolicy() -> OutboundAddressPolicy {
        OutboundAddressPolicy(allowPrivate: flag("IDENTITY_ALLOW_PRIVATE_OUTBOUND"),
                              allowInsecure: flag("IDENTITY_ALLOW_INSECURE_OUTBOUND"))
    }

    /// `1` or `0` (unset: `0`); anything else is a problem rather than a silent no, since these
    /// loosen a security rule and a `true` read as off would be a surprise either way.
    private mutating func flag(_ name: String) -> Bool {
        switch raw(name) {
        case nil, "0": return false
        case "1": return true
        case let other?:
            fail("\(name)=\(other) must be 1 or 0")
            return false
        }
    }
}
