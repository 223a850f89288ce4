import Foundation

/// Which addresses an app's URL may not reach (`OutboundAddressPolicy`): pure functions of the
/// address bytes, shared by the save-time checks and the connect-time check of the mailer.
extension OutboundAddressPolicy {
    /// Why an address is refused (the rawValue is what messages and logs say).
    public enum Refusal: String, Sendable, CaseIterable {
        case unspecified
        case loopback
        case privateNetwork = "private"
        case sharedAddressSpace = "carrier-grade NAT"
        case linkLocal = "link-local"
        case uniqueLocal = "unique-local"
        case multicast
        case broadcast
        case reserved
        case metadata = "cloud metadata"
    }

    /// nil for an address an app's URL may reach; `address` is 4 (IPv4) or 16 (IPv6) bytes in
    /// network order, as a sockaddr holds them (any other length is refused).
    public static func refusal(of address: [UInt8]) -> Refusal? {
        switch address.count {
        case 4: refusalV4(address.reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
        case 16: refusalV6(address)
        default: .reserved
        }
    }

    /// First match wins, so the metadata addresses come before the ranges that hold them.
    private static let v4Ranges: [(base: UInt32, bits: UInt32, refusal: Refusal)] = [
        // Instance metadata: 169.254.169.254 (AWS, GCP, Azure, Oracle, OpenStack…), the ECS task
        // endpoint 169.254.170.2, Alibaba's 100.100.100.200, and Azure's WireServer
        // 168.63.129.16: a public address that answers only from inside Azure, with the VM's own.
        (0xA9FE_A9FE, 32, .metadata), (0xA9FE_AA02, 32, .metadata), (0x6464_64C8, 32, .metadata),
        (0xA83F_8110, 32, .metadata),
        // 0.0.0.0/8, "this network": Linux connects 0.0.0.0 to the host itself.
        (0x0000_0000, 8, .unspecified),
        (0x7F00_0000, 8, .loopback),
        (0x0A00_0000, 8, .privateNetwork), (0xAC10_0000, 12, .privateNetwork), (0xC0A8_0000, 16, .privateNetwork),
        (0x6440_0000, 10, .sharedAddressSpace),
        (0xA9FE_0000, 16, .linkLocal),
        (0xE000_0000, 4, .multicast),
        (0xFFFF_FFFF, 32, .broadcast),
        // 240/4 (future use), 192.0.0.0/24 (protocol assignments), 198.18/15 (benchmarking) and
        // the documentation networks: not reachable on the internet, so only ever someone's own.
        (0xF000_0000, 4, .reserved), (0xC000_0000, 24, .reserved), (0xC612_0000, 15, .reserved),
        (0xC000_0200, 24, .reserved), (0xC633_6400, 24, .reserved), (0xCB00_7100, 24, .reserved),
    ]

    static func refusalV4(_ address: UInt32) -> Refusal? {
        v4Ranges.first { range in
            let mask: UInt32 = range.bits == 0 ? 0 : ~UInt32(0) << (32 - range.bits)
            return address & mask == range.base & mask
        }?.refusal
    }

    static func refusalV6(_ a: [UInt8]) -> Refusal? {
        let embedded = { (start: Int) in refusalV4(a[start..<start + 4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }) }
        let zero = { (range: Range<Int>) in a[range].allSatisfy { $0 == 0 } }
        // ::ffff:a.b.c.d: an IPv6 socket connects to it over IPv4, so it is the IPv4 address.
        if zero(0..<10), a[10] == 0xff, a[11] == 0xff { return embedded(12) }
        if zero(0..<12) {
            if zero(12..<15), a[15] == 0 { return .unspecified }
            if zero(12..<15), a[15] == 1 { return .loopback }
            return .reserved  // ::a.b.c.d, the deprecated IPv4-compatible form
        }
        // ::ffff:0:a.b.c.d (SIIT) and 64:ff9b::a.b.c.d (NAT64, which DNS64 hands IPv6-only hosts
        // for public names): translated to the IPv4 address they hold, so judged by it.
        if zero(0..<8), a[8] == 0xff, a[9] == 0xff, zero(10..<12) { return embedded(12) }
        if a[0] == 0, a[1] == 0x64, a[2] == 0xff, a[3] == 0x9b, zero(4..<12) { return embedded(12) }
        // fd00:ec2::254: the AWS metadata service over IPv6 (inside fc00::/7, named apart).
        if a == [0xfd, 0, 0x0e, 0xc2] + Array(repeating: 0, count: 10) + [0x02, 0x54] { return .metadata }
        if a[0] & 0xfe == 0xfc { return .uniqueLocal }
        if a[0] == 0xfe, a[1] & 0xc0 == 0x80 { return .linkLocal }
        // fec0::/10, site-local: deprecated, still routed inside some sites.
        if a[0] == 0xfe, a[1] & 0xc0 == 0xc0 { return .privateNetwork }
        if a[0] == 0xff { return .multicast }
        // Only 2000::/3 is handed out as global unicast; the rest is unassigned or special.
        if a[0] & 0xe0 != 0x20 { return .reserved }
        // 2002::/16, 6to4: relayed to the IPv4 address in bits 16–47.
        if a[0] == 0x20, a[1] == 0x02 { return embedded(2) }
        // 2001::/32 (Teredo: tunnels to an IPv4 address held obfuscated in the last 32 bits),
        // 2001:db8::/32 and 3fff::/20 (documentation).
        if a[0] == 0x20, a[1] == 0x01, zero(2..<4) { return .reserved }
        if a[0] == 0x20, a[1] == 0x01, a[2] == 0x0d, a[3] == 0xb8 { return .reserved }
        if a[0] == 0x3f, a[1] == 0xff, a[2] & 0xf0 == 0 { return .reserved }
        return nil
    }

    /// The address a URL's host names literally, read as the C resolver and libcurl read it:
    /// IPv4 in any form `inet_aton` takes (127.1, 0x7f.0.0.1, 2130706433, 0177.0.0.1: all
    /// 127.0.0.1), IPv6 without brackets, a zone id (`%eth0`) dropped since it picks an
    /// interface, not an address. nil for a name.
    public static func literalAddress(_ host: String) -> [UInt8]? {
        if host.contains(":") {
            let address = host.split(separator: "%", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
            var bytes = in6_addr()
            guard inet_pton(AF_INET6, address, &bytes) == 1 else { return nil }
            return withUnsafeBytes(of: &bytes) { Array($0) }
        }
        var bytes = in_addr()
        guard !host.isEmpty, host.allSatisfy({ $0.isASCII && ($0.isHexDigit || $0 == "." || $0 == "x" || $0 == "X") }),
              inet_aton(host, &bytes) != 0 else { return nil }
        return withUnsafeBytes(of: &bytes) { Array($0) }
    }

    /// The usual text of an address (`inet_ntop`).
    public static func text(of address: [UInt8]) -> String {
        let family = address.count == 16 ? AF_INET6 : AF_INET
        guard address.count == 4 || address.count == 16 else { return "?" }
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let written = address.withUnsafeBytes { raw in inet_ntop(family, raw.baseAddress, &buffer, socklen_t(buffer.count)) }
        return written == nil ? "?" : String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
