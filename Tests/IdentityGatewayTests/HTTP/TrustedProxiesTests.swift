import XCTest
@testable import IdentityGateway

final class TrustedProxiesTests: XCTestCase {
    private func proxies(_ list: String) throws -> TrustedProxies {
        try TrustedProxies(parsing: list)
    }

    // MARK: - Addresses

    func testParsesIPv4Strictly() {
        XCTAssertEqual(IPAddress("203.0.113.7")?.description, "203.0.113.7")
        XCTAssertEqual(IPAddress("0.0.0.0")?.description, "0.0.0.0")
        XCTAssertEqual(IPAddress("255.255.255.255")?.description, "255.255.255.255")
        for bad in ["256.1.1.1", "1.2.3", "1.2.3.4.5", "01.2.3.4", "1.2.3.-4", "1..3.4", "", " 1.2.3.4",
                    "1.2.3.4 ", "a.b.c.d", "1.2.3.4/32", "1.2.3.4:80", "0x7f.0.0.1", "１.2.3.4"] {
            XCTAssertNil(IPAddress(bad), bad)
        }
    }

    func testParsesIPv6AndPrintsRFC5952() {
        XCTAssertEqual(IPAddress("2001:DB8:0:0:0:0:0:1")?.description, "2001:db8::1")
        XCTAssertEqual(IPAddress("2001:db8::1")?.description, "2001:db8::1")
        XCTAssertEqual(IPAddress("::")?.description, "::")
        XCTAssertEqual(IPAddress("::1")?.description, "::1")
        XCTAssertEqual(IPAddress("fe80::")?.description, "fe80::")
        XCTAssertEqual(IPAddress("2001:db8:0:1:0:0:0:1")?.description, "2001:db8:0:1::1")   // longest run
        XCTAssertEqual(IPAddress("2001:0:0:1:0:0:1:1")?.description, "2001::1:0:0:1:1")     // first of equal runs
        XCTAssertEqual(IPAddress("2001:db8:1:1:1:1:0:1")?.description, "2001:db8:1:1:1:1:0:1") // one zero group stays
        XCTAssertEqual(IPAddress("64:ff9b::192.0.2.33")?.description, "64:ff9b::c000:221")
        XCTAssertEqual(IPAddress("1:2:3:4:5:6:1.2.3.4")?.description, "1:2:3:4:5:6:102:304")
        for bad in [":::", "1::2::3", "1:2:3:4:5:6:7", "1:2:3:4:5:6:7:8:9", "1:2:3:4:5:6:7::8", "12345::",
                    "g::1", ":1:2:3:4:5:6:7", "1:2:3:4:5:6:7:", "1.2.3.4::", "::1.2.3", "fe80::1%eth0",
                    "[::1]", "::1 "] {
            XCTAssertNil(IPAddress(bad), bad)
        }
    }

    func testIPv4MappedIPv6IsTheIPv4Address() throws {
        let mapped = try XCTUnwrap(IPAddress("::ffff:10.1.2.3"))
        XCTAssertEqual(mapped, IPAddress("10.1.2.3"))
        XCTAssertEqual(mapped.description, "10.1.2.3")
        XCTAssertTrue(try proxies("10.0.0.0/8").contains(mapped))
        XCTAssertTrue(try proxies("::ffff:10.0.0.0/104").contains(try XCTUnwrap(IPAddress("10.9.9.9"))))
    }

    // MARK: - Ranges

    func testRangesMatchIPv4AndIPv6() throws {
        let list = try proxies("10.0.0.0/8, 192.168.1.7/32,fd00::/8 , 2001:db8::5/128")
        XCTAssertEqual(list.ranges.map(\.description), ["10.0.0.0/8", "192.168.1.7/32", "fd00::/8", "2001:db8::5/128"])
        XCTAssertTrue(list.containsPeer("10.255.0.1"))
        XCTAssertFalse(list.containsPeer("11.0.0.1"))
        XCTAssertTrue(list.containsPeer("192.168.1.7"))
        XCTAssertFalse(list.containsPeer("192.168.1.8"))
        XCTAssertTrue(list.containsPeer("fd12:3456::1"))
        XCTAssertFalse(list.containsPeer("fe00::1"))
        XCTAssertTrue(list.containsPeer("2001:db8::5"))
        XCTAssertFalse(list.containsPeer("2001:db8::6"))
        // Families never match each other: ::a00:1 is not 10.0.0.1.
        XCTAssertFalse(list.containsPeer("::a00:1"))
        XCTAssertFalse(list.containsPeer("not an address"))
        XCTAssertFalse(list.containsPeer(""))
    }

    func testSlashZeroMatchesItsWholeFamilyOnly() throws {
        let v4 = try proxies("0.0.0.0/0")
        XCTAssertTrue(v4.containsPeer("1.2.3.4"))
        XCTAssertTrue(v4.containsPeer("255.255.255.255"))
        XCTAssertFalse(v4.containsPeer("2001:db8::1"))
        let v6 = try proxies("::/0")
        XCTAssertTrue(v6.containsPeer("2001:db8::1"))
        XCTAssertTrue(v6.containsPeer("::"))
        XCTAssertFalse(v6.containsPeer("1.2.3.4"))
    }

    func testBareAddressIsOneHost() throws {
        let list = try proxies("127.0.0.1,::1")
        XCTAssertEqual(list.ranges.map(\.description), ["127.0.0.1/32", "::1/128"])
        XCTAssertTrue(list.containsPeer("127.0.0.1"))
        XCTAssertFalse(list.containsPeer("127.0.0.2"))
        XCTAssertTrue(list.containsPeer("::1"))
    }

    func testPrefixBoundaries() throws {
        let list = try proxies("192.0.2.128/25, 2001:db8:8000::/33")
        XCTAssertTrue(list.containsPeer("192.0.2.128"))
        XCTAssertTrue(list.containsPeer("192.0.2.255"))
        XCTAssertFalse(list.containsPeer("192.0.2.127"))
        XCTAssertTrue(list.containsPeer("2001:db8:8000::"))
        XCTAssertTrue(list.containsPeer("2001:db8:ffff:ffff:ffff:ffff:ffff:ffff"))
        XCTAssertFalse(list.containsPeer("2001:db8:7fff:ffff:ffff:ffff:ffff:ffff"))
    }

    func testEmptyListsAndBlankEntries() throws {
        XCTAssertTrue(try proxies("").isEmpty)
        XCTAssertTrue(try proxies(" , ,").isEmpty)
        XCTAssertEqual(try proxies(" 10.0.0.0/8 ,\t,").ranges.count, 1)
    }

    func testInvalidEntriesAreAllNamed() {
        XCTAssertThrowsError(try proxies("10.0.0.0/8, 10.0.0/8, 10.0.0.1/8, 1.2.3.4/33, ::/129, fd00::/-1, x, 1.2.3.4/, /8, 1.2.3.4/08a")) { error in
            XCTAssertEqual((error as? TrustedProxies.ParseError)?.entries,
                           ["10.0.0/8", "10.0.0.1/8", "1.2.3.4/33", "::/129", "fd00::/-1", "x", "1.2.3.4/", "/8", "1.2.3.4/08a"])
        }
    }

    // MARK: - X-Forwarded-For

    func testUntrustedPeerIgnoresForwardedFor() throws {
        let list = try proxies("10.0.0.0/8")
        XCTAssertEqual(list.clientAddress(peer: "198.51.100.9", forwardedFor: "203.0.113.7"), "198.51.100.9")
        XCTAssertEqual(TrustedProxies.none.clientAddress(peer: "127.0.0.1", forwardedFor: "203.0.113.7"), "127.0.0.1")
    }

    func testTrustedPeerWithoutForwardedForIsTheClient() throws {
        let list = try proxies("10.0.0.0/8")
        XCTAssertEqual(list.clientAddress(peer: "10.0.0.2", forwardedFor: nil), "10.0.0.2")
        XCTAssertEqual(list.clientAddress(peer: "10.0.0.2", forwardedFor: " , "), "10.0.0.2")
    }

    func testRightMostUntrustedHopWinsAndSpoofedLeftEntriesAreIgnored() throws {
        let list = try proxies("10.0.0.0/8")
        // The client wrote "1.1.1.1, 2.2.2.2" itself; our proxies appended 203.0.113.7, 10.0.0.5.
        XCTAssertEqual(list.clientAddress(peer: "10.0.0.2", forwardedFor: "1.1.1.1, 2.2.2.2, 203.0.113.7, 10.0.0.5"),
                       "203.0.113.7")
        XCTAssertEqual(list.clientAddress(peer: "10.0.0.2", forwardedFor: "203.0.113.7"), "203.0.113.7")
    }

    func testAllHopsTrustedGivesTheLeftMost() throws {
        let list = try proxies("10.0.0.0/8")
        XCTAssertEqual(list.clientAddress(peer: "10.0.0.2", forwardedFor: "10.1.1.1, 10.0.0.5"), "10.1.1.1")
    }

    func testUnparsableHopStopsTheWalkAtThePeer() throws {
        let list = try proxies("10.0.0.0/8")
        XCTAssertEqual(list.clientAddress(peer: "10.0.0.2", forwardedFor: "203.0.113.7, unknown"), "10.0.0.2")
        XCTAssertEqual(list.clientAddress(peer: "10.0.0.2", forwardedFor: "203.0.113.7, 10.0.0.9, 1.2.3.4:5678"), "10.0.0.2")
        // An unparsable hop left of the client is never reached.
        XCTAssertEqual(list.clientAddress(peer: "10.0.0.2", forwardedFor: "garbage, 203.0.113.7, 10.0.0.9"), "203.0.113.7")
    }

    func testBlanksAroundHopsAndEmptyHops() throws {
        let list = try proxies("10.0.0.0/8")
        XCTAssertEqual(list.clientAddress(peer: "10.0.0.2", forwardedFor: " 203.0.113.7 ,\t10.0.0.9\t "), "203.0.113.7")
        XCTAssertEqual(list.clientAddress(peer: "10.0.0.2", forwardedFor: "203.0.113.7,,10.0.0.9,"), "203.0.113.7")
    }

    func testMixedFamiliesAndCanonicalText() throws {
        let list = try proxies("10.0.0.0/8, fd00::/8")
        XCTAssertEqual(list.clientAddress(peer: "10.0.0.2", forwardedFor: "2001:DB8::0:7, fd00::1, 10.0.0.3"), "2001:db8::7")
        XCTAssertEqual(list.clientAddress(peer: "10.0.0.2", forwardedFor: "203.0.113.7, ::ffff:10.2.3.4"), "203.0.113.7")
    }

    func testSeveralHeaderLinesAreOneListInOrder() throws {
        let list = try proxies("10.0.0.0/8")
        var lines = HeaderLines()
        lines.append(name: "X-Forwarded-For", value: "1.1.1.1, 203.0.113.7")
        lines.append(name: "x-forwarded-for", value: "10.0.0.9")
        let combined = lines.combined["x-forwarded-for"]
        XCTAssertEqual(combined, "1.1.1.1, 203.0.113.7, 10.0.0.9")
        XCTAssertEqual(list.clientAddress(peer: "10.0.0.2", forwardedFor: combined), "203.0.113.7")
    }
}
