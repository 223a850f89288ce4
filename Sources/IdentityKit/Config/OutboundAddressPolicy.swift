import Foundation

/// Where a URL that an app sets may lead (its SMS API URL, its FCM service account's
/// `token_uri`, any later webhook): a tenant must not be able to make the service's own
/// processes send requests into the network they run in (loopback, private ranges, link-local,
/// cloud metadata…), which would reach what no tenant should reach (SSRF). Operators' own URLs
/// (`IDENTITY_SMS_API_URL`, `IDENTITY_FCM_URL`, …) are not held to it.
///
/// Checked twice: when a setting is saved (`problem(url:)` for the URL as written, in the
/// gateway and the token worker; `lookupProblem(url:)` for where its host resolves, in the token
/// worker and identityctl), so the app hears at once; and at connect, on the very address libcurl
/// is about to connect to (`OutboundHTTP`, CURLOPT_OPENSOCKETFUNCTION), since a name may resolve
/// elsewhere by then, and that check is what actually keeps a request from leaving.
public struct OutboundAddressPolicy: Sendable, Equatable {
    /// `IDENTITY_ALLOW_PRIVATE_OUTBOUND=1`: any address (tests' stand-ins listen on loopback).
    public var allowPrivate: Bool
    /// `IDENTITY_ALLOW_INSECURE_OUTBOUND=1`: plain http too. Apart from the address rule, so a
    /// test can show the address refusal on its own (an http stand-in, private addresses refused).
    public var allowInsecure: Bool

    public init(allowPrivate: Bool = false, allowInsecure: Bool = false) {
        self.allowPrivate = allowPrivate
        self.allowInsecure = allowInsecure
    }

    /// What is wrong with `text` as an app's outbound URL, from the text alone (no lookup, so the
    /// gateway may run it on an HTTP thread): the scheme, and a host that is a refused address
    /// written literally. nil: it may be saved once `lookupProblem` agrees.
    public func problem(url text: String) -> String? {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(),
              let host = url.host.map(Self.hostName), !host.isEmpty else {
            return "must be an absolute https URL"
        }
        if allowInsecure {
            guard scheme == "https" || scheme == "http" else { return "must be an http or https URL" }
        } else if scheme != "https" {
            return "must be an https URL"
        }
        guard !allowPrivate, let address = Self.literalAddress(host), let refusal = Self.refusal(of: address) else {
            return nil
        }
        return Self.message(host: host, address: address, refusal)
    }

    /// The host as the resolver gets it: without IPv6 brackets, a trailing root dot, or case.
    static func hostName(_ host: String) -> String {
        var name = host.lowercased()
        if name.hasPrefix("["), name.hasSuffix("]") { name = String(name.dropFirst().dropLast()) }
        if name.hasSuffix("."), name.count > 1 { name.removeLast() }
        return name
    }

    static func message(host: String, address: [UInt8], _ refusal: Refusal) -> String {
        let shown = text(of: address)
        let target = shown == host ? shown : "\(host) (\(shown))"
        return "must reach a public address, not \(target): \(refusal.rawValue)"
    }

    // The process's policy. `AppSettingsUpdate.problems` reads it: the gateway and the token
    // worker run that one check, and neither caller passes configuration into it.
    private static let configured = Locked(OutboundAddressPolicy())

    /// This process's policy (strict until `CommonConfiguration.applyToProcess` or identityctl
    /// sets the one read from the environment).
    public static var current: OutboundAddressPolicy { configured.withLock { $0 } }

    public static func setCurrent(_ policy: OutboundAddressPolicy) { configured.withLock { $0 = policy } }
}
