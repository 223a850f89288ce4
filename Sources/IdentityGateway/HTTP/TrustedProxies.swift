/// The proxies whose `X-Forwarded-For` the gateway believes (`IDENTITY_TRUSTED_PROXIES`), and
/// the walk that turns a socket peer and that header into the client's address.
///
/// Every proxy appends the address it received the request from, so only the right-hand end of
/// the list is written by proxies we run; anything to the left of the first hop we do not trust
/// was written by the client and may be forged. Hence: start from the right, skip our own
/// proxies, and the first address that is not ours is the client.
struct TrustedProxies: Sendable {
    /// One CIDR range, IPv4 or IPv6.
    struct Range: Sendable, Equatable, CustomStringConvertible {
        let network: IPAddress
        let prefixLength: Int

        /// `10.0.0.0/8`, `fd00::/8`, or a bare address (a single host). Nil when malformed or
        /// when host bits are set (`10.0.0.1/8` is more likely a typo than a network).
        init?(_ text: some StringProtocol) {
            let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
            guard let address = IPAddress(parts[0]) else { return nil }
            var width = address.bitWidth
            // `::ffff:10.0.0.0/104` is an IPv4 range written as IPv6: the address was mapped
            // to IPv4, so the prefix loses its 96 leading bits too.
            let mapped = address.family == .v4 && parts[0].contains(":")
            if mapped { width = 128 }
            var prefix = width
            if parts.count == 2 {
                guard (1...3).contains(parts[1].count), parts[1].allSatisfy({ $0.isASCII && $0.isNumber }),
                      let value = Int(parts[1]), value <= width else { return nil }
                prefix = value
            }
            if mapped {
                guard prefix >= 96 else { return nil }
                prefix -= 96
            }
            guard address.bits & ~Self.mask(prefix, width: address.bitWidth) == 0 else { return nil }
            network = address
            prefixLength = prefix
        }

        func contains(_ address: IPAddress) -> Bool {
            address.family == network.family
                && address.bits & Self.mask(prefixLength, width: network.bitWidth) == network.bits
        }

        var description: String { "\(network)/\(prefixLength)" }

        /// The top `prefix` bits of a `width`-bit address.
        private static func mask(_ prefix: Int, width: Int) -> UInt128 {
            guard prefix > 0 else { return 0 }
            return (UInt128.max >> (128 - prefix)) << (width - prefix)
        }
    }

    /// The entries of a list that are not CIDR ranges.
    struct ParseError: Error, Equatable {
        let entries: [String]
    }

    let ranges: [Range]

    static let none = TrustedProxies(ranges: [])

    init(ranges: [Range]) { self.ranges = ranges }

    /// A comma-separated list of ranges; blanks around entries and empty entries are ignored.
    /// Throws the entries that are not ranges, all of them, so start-up names each one.
    init(parsing list: String) throws(ParseError) {
        var ranges: [Range] = []
        var invalid: [String] = []
        for raw in list.split(separator: ",", omittingEmptySubsequences: false) {
            let entry = raw.trimmingBlanks
            if entry.isEmpty { continue }
            if let range = Range(entry) { ranges.append(range) } else { invalid.append(String(entry)) }
        }
        guard invalid.isEmpty else { throw ParseError(entries: invalid) }
        self.ranges = ranges
    }

    var isEmpty: Bool { ranges.isEmpty }

    func contains(_ address: IPAddress) -> Bool {
        ranges.contains { $0.contains(address) }
    }

    /// Whether a socket peer (as text) is one of our proxies.
    func containsPeer(_ peer: String) -> Bool {
        guard !ranges.isEmpty, let address = IPAddress(peer) else { return false }
        return contains(address)
    }

    /// The client's address: the peer itself unless the peer is trusted and sent
    /// `X-Forwarded-For` (every line of it, joined in order into one comma list); then the
    /// right-most hop that is not trusted, or the left-most when every hop is trusted. A hop
    /// that is not an address where the walk stops means the list cannot be believed from there
    /// on, and the peer is answered instead.
    func clientAddress(peer: String, forwardedFor: String?) -> String {
        guard let forwardedFor, containsPeer(peer) else { return peer }
        let hops = forwardedFor.split(separator: ",").map(\.trimmingBlanks).filter { !$0.isEmpty }
        var leftmost: IPAddress?
        for hop in hops.reversed() {
            guard let address = IPAddress(hop) else { return peer }
            if !contains(address) { return address.description }
            leftmost = address
        }
        return leftmost?.description ?? peer
    }
}
