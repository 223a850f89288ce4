import Foundation
import IdentityKit
import IdentityOutbound

/// One provider's signing keys, fetched with libcurl and cached for the `max-age` the provider
/// sends. A token naming an unknown `kid` refetches at once, but at most once per
/// `refetchInterval`, so a flood of made-up kids cannot turn into a flood of fetches. When the
/// provider cannot be reached the cached keys keep working, but only for `maximumStaleness`
/// (24 h by default) after the last successful fetch: a key the provider has since revoked
/// must not be trusted forever because its endpoint is blocked. With none trusted the
/// sign-in answers 503 `auth/provider-unavailable`. RSA keys under 2048 bits are ignored.
final class JWKSCache: Sendable {
    private struct State {
        var keys: [String: RSAKey] = [:]
        var fetchedAt: Date?
        var maxAge: TimeInterval = 3600
        var lastAttempt: Date?
    }

    let url: String
    private let http: OutboundHTTP
    private let refetchInterval: TimeInterval
    private let maximumStaleness: TimeInterval
    private let state = Locked(State())
    /// One fetch at a time: concurrent sign-ins wait for it instead of fetching in parallel.
    private let fetching = NSLock()

    /// The smallest RSA modulus accepted from a provider.
    static let minimumModulusBits = 2048

    init(url: String, http: OutboundHTTP, refetchInterval: TimeInterval, maximumStaleness: TimeInterval = 86_400) {
        self.url = url
        self.http = http
        self.refetchInterval = refetchInterval
        self.maximumStaleness = maximumStaleness
    }

    /// The key for `kid`, or nil when the provider does not have it.
    func key(kid: String) throws -> RSAKey? {
        let now = Date()
        let snapshot = state.withLock { $0 }
        let fresh = snapshot.fetchedAt.map { now.timeIntervalSince($0) < snapshot.maxAge } ?? false
        if let key = snapshot.keys[kid], fresh { return key }
        let mayFetch = snapshot.lastAttempt.map { now.timeIntervalSince($0) >= refetchInterval } ?? true
        if mayFetch || snapshot.fetchedAt == nil {
            fetch()
        }
        let after = state.withLock { $0 }
        guard let fetchedAt = after.fetchedAt,
              Self.trusted(fetchedAt: fetchedAt, now: Date(), maximumStaleness: maximumStaleness) else {
            throw ServiceError.providerUnavailable
        }
        return after.keys[kid]
    }

    private func fetch() {
        fetching.lock()
        defer { fetching.unlock() }
        // Another thread may have fetched while this one waited.
        if let last = state.withLock({ $0.lastAttempt }), Date().timeIntervalSince(last) < min(refetchInterval, 1),
           state.withLock({ $0.fetchedAt }) != nil {
            return
        }
        state.withLock { $0.lastAttempt = Date() }
        do {
            let response = try http.get(url)
            // A JWKS is a few KiB; the cap leaves room for a provider with many keys.
            guard response.status == 200,
                  case .array(let jwks)? = JSONValue.parse(response.body, maximumBytes: 1 << 20)?["keys"] else {
                Log.warning("JWKS fetch failed", ["url": url, "status": response.status])
                return
            }
            var keys: [String: RSAKey] = [:]
            for jwk in jwks {
                guard case .string(let kid)? = jwk["kid"], jwk["kty"] == .string("RSA"),
                      case .string(let n)? = jwk["n"], case .string(let e)? = jwk["e"],
                      let modulus = Base64URL.decode(n), let exponent = Base64URL.decode(e),
                      Self.modulusBits(modulus) >= Self.minimumModulusBits,
                      let key = try? RSAKey.fromComponents(modulus: modulus, exponent: exponent) else { continue }
                keys[kid] = key
            }
            let maxAge = Self.maxAge(response.cacheControl) ?? 3600
            state.withLock {
                $0.keys = keys
                $0.fetchedAt = Date()
                $0.maxAge = maxAge
            }
        } catch {
            Log.warning("JWKS unreachable; cached keys stay in use", ["url": url, "error": String(describing: error)])
        }
    }

    /// Keys fetched at `fetchedAt` are still trusted at `now` (the provider may be unreachable
    /// meanwhile, but not for longer than `maximumStaleness`).
    static func trusted(fetchedAt: Date, now: Date, maximumStaleness: TimeInterval) -> Bool {
        now.timeIntervalSince(fetchedAt) <= maximumStaleness
    }

    /// The bit length of a big-endian modulus (leading zero bytes and bits do not count).
    static func modulusBits(_ modulus: [UInt8]) -> Int {
        guard let first = modulus.firstIndex(where: { $0 != 0 }) else { return 0 }
        return (modulus.count - first - 1) * 8 + (8 - modulus[first].leadingZeroBitCount)
    }

    /// `max-age` of a Cache-Control header, in seconds.
    static func maxAge(_ header: String?) -> TimeInterval? {
        guard let header else { return nil }
        for part in header.split(separator: ",") {
            let trimmed = part.trimmingCharacters(in: .whitespaces).lowercased()
            if trimmed.hasPrefix("max-age="), let seconds = Double(trimmed.dropFirst(8)) { return seconds }
        }
        return nil
    }
}
