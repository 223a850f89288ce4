import XCTest
@testable import IdentityKit

/// Which addresses an app's URL may reach (`OutboundAddressPolicy`): the classification, the
/// literal forms a host may take, the URL rules at save, and where they reach the settings.
final class OutboundAddressPolicyTests: XCTestCase {
    private typealias Policy = OutboundAddressPolicy

    private func refusal(_ host: String, file: StaticString = #filePath, line: UInt = #line) -> Policy.Refusal? {
        guard let address = Policy.literalAddress(host) else {
            XCTFail("\(host) is not read as an address", file: file, line: line)
            return nil
        }
        return Policy.refusal(of: address)
    }

    func testIPv4Ranges() {
        let expected: [(String, Policy.Refusal?)] = [
            ("127.0.0.1", .loopback), ("127.255.255.255", .loopback),
            ("0.0.0.0", .unspecified), ("0.1.2.3", .unspecified),
            ("10.0.0.1", .privateNetwork), ("10.255.255.255", .privateNetwork),
            ("172.15.255.255", nil), ("172.16.0.0", .privateNetwork), ("172.31.255.255", .privateNetwork),
            ("172.32.0.0", nil),
            ("192.167.255.255", nil), ("192.168.0.0", .privateNetwork), ("192.168.255.255", .privateNetwork),
            ("192.169.0.0", nil),
            ("169.254.0.1", .linkLocal), ("169.254.169.254", .metadata), ("169.254.170.2", .metadata),
            ("169.253.255.255", nil), ("169.255.0.0", nil),
            ("100.63.255.255", nil), ("100.64.0.0", .sharedAddressSpace), ("100.127.255.255", .sharedAddressSpace),
            ("100.128.0.0", nil), ("100.100.100.200", .metadata), ("168.63.129.16", .metadata),
            ("224.0.0.1", .multicast), ("239.255.255.255", .multicast),
            ("255.255.255.255", .broadcast), ("240.0.0.1", .reserved),
            ("192.0.2.1", .reserved), ("198.18.0.1", .reserved), ("198.20.0.1", nil),
            ("8.8.8.8", nil), ("1.1.1.1", nil), ("52.4.4.4", nil), ("223.255.255.255", nil),
        ]
        for (host, refused) in expected {
            XCTAssertEqual(refusal(host), refused, host)
        }
    }

    func testIPv6RangesAndTheIPv4FormsInsideThem() {
        let expected: [(String, Policy.Refusal?)] = [
            ("::1", .loopback), ("::", .unspecified),
            ("fe80::1", .linkLocal), ("febf:ffff::1", .linkLocal), ("fec0::1", .privateNetwork),
            ("fc00::1", .uniqueLocal), ("fdff:ffff::1", .uniqueLocal), ("fd00:ec2::254", .metadata),
            ("fd00:ec2::253", .uniqueLocal),
            ("ff02::1", .multicast), ("ff0e::1", .multicast),
            // IPv4-mapped: judged as the IPv4 address, in dotted or hex form.
            ("::ffff:127.0.0.1", .loopback), ("::ffff:7f00:1", .loopback), ("::ffff:10.0.0.1", .privateNetwork),
            ("::ffff:169.254.169.254", .metadata), ("::ffff:172.16.0.1", .privateNetwork),
            ("::ffff:100.64.0.1", .sharedAddressSpace), ("::ffff:0.0.0.0", .unspecified),
            ("::ffff:172.15.255.255", nil), ("::ffff:8.8.8.8", nil),
            // SIIT, NAT64 and 6to4 reach the IPv4 address they hold.
            ("::ffff:0:127.0.0.1", .loopback), ("64:ff9b::10.0.0.1", .privateNetwork), ("64:ff9b::8.8.8.8", nil),
            ("2002:a9fe:a9fe::1", .metadata), ("2002:0808:0808::1", nil),
            // The deprecated IPv4-compatible form, Teredo, documentation, unassigned space.
            ("::127.0.0.1", .reserved), ("2001::1", .reserved), ("2001:db8::1", .reserved), ("3fff::1", .reserved),
            ("100::1", .reserved), ("4000::1", .reserved),
            ("2606:4700:4700::1111", nil), ("2a00:1450:4007:80a::200e", nil),
        ]
        for (host, refused) in expected {
            XCTAssertEqual(refusal(host), refused, host)
        }
    }

    func testLiteralHostsAreReadAsTheResolverReadsThem() {
        // inet_aton's forms: each of these is 127.0.0.1 to getaddrinfo and to libcurl.
        for host in ["127.0.0.1", "127.1", "0x7f.0.0.1", "0x7f000001", "2130706433", "0177.0.0.1"] {
            XCTAssertEqual(Policy.literalAddress(host), [127, 0, 0, 1], host)
        }
        XCTAssertEqual(Policy.literalAddress("fe80::1%eth0").map(Policy.refusal(of:)), .linkLocal)
        for name in ["localhost", "example.com", "10.0.0.1.example.com", "face", "", "1.2.3.4 x", "::zz"] {
            XCTAssertNil(Policy.literalAddress(name), name)
        }
        XCTAssertEqual(Policy.text(of: [169, 254, 169, 254]), "169.254.169.254")
        XCTAssertEqual(Policy.text(of: Policy.literalAddress("::ffff:127.0.0.1")!), "::ffff:127.0.0.1")
        XCTAssertEqual(Policy.refusal(of: [1, 2, 3]), .reserved)
    }

    func testURLsAtSave() {
        let strict = Policy()
        for url in ["http://127.0.0.1:8080/", "https://127.0.0.1/", "https://169.254.169.254/latest", "https://10.0.0.1/",
                    "https://[::1]/", "https://[::ffff:127.0.0.1]:443/", "https://[fd00:ec2::254]/", "https://2130706433/",
                    "https://0x7f.1/", "ftp://api.example.com/", "not a url", "https:///path"] {
            XCTAssertNotNil(strict.problem(url: url), url)
        }
        XCTAssertNil(strict.problem(url: "https://api.twilio.com"))
        XCTAssertNil(strict.problem(url: "https://8.8.8.8/"))
        XCTAssertEqual(strict.problem(url: "http://api.twilio.com"), "must be an https URL")
        XCTAssertEqual(strict.problem(url: "https://[::ffff:10.0.0.1]/"),
                       "must reach a public address, not ::ffff:10.0.0.1: private")
        XCTAssertEqual(strict.problem(url: "https://0x7f.1/"), "must reach a public address, not 0x7f.1 (127.0.0.1): loopback")
        // Each allowance loosens its own rule only.
        let insecure = Policy(allowInsecure: true)
        XCTAssertNil(insecure.problem(url: "http://api.twilio.com"))
        XCTAssertNotNil(insecure.problem(url: "http://127.0.0.1:8080/"))
        let privateAllowed = Policy(allowPrivate: true)
        XCTAssertNil(privateAllowed.problem(url: "https://127.0.0.1:8080/"))
        XCTAssertEqual(privateAllowed.problem(url: "http://127.0.0.1:8080/"), "must be an https URL")
        XCTAssertNil(Policy(allowPrivate: true, allowInsecure: true).problem(url: "http://169.254.169.254/"))
    }

    func testWhereANameResolvesAtSave() {
        // localhost resolves to loopback through /etc/hosts: no network needed.
        let problem = Policy().lookupProblem(url: "https://localhost:8443/x")
        // Refused without naming where it resolves (no DNS oracle): neither the address nor its range.
        XCTAssertEqual(problem, "must reach a public address: localhost resolves to an address that is not public")
        XCTAssertFalse(problem?.contains("127.0.0.1") ?? true)
        XCTAssertFalse(problem?.contains("loopback") ?? true)
        XCTAssertNil(Policy(allowPrivate: true).lookupProblem(url: "https://localhost/"))
        // A name that does not resolve is left to the check at connect.
        XCTAssertNil(Policy().lookupProblem(url: "https://no-such-host.invalid/"))
        // A literal is problem(url:)'s: no lookup.
        XCTAssertNil(Policy().lookupProblem(url: "https://127.0.0.1/"))
    }

    func testTheEnvironmentAllowsEachOnItsOwn() {
        var env = EnvironmentReader(["IDENTITY_ALLOW_PRIVATE_OUTBOUND": "1"])
        XCTAssertEqual(env.outboundAddressPolicy(), Policy(allowPrivate: true, allowInsecure: false))
        env = EnvironmentReader(["IDENTITY_ALLOW_INSECURE_OUTBOUND": "1", "IDENTITY_ALLOW_PRIVATE_OUTBOUND": "0"])
        XCTAssertEqual(env.outboundAddressPolicy(), Policy(allowPrivate: false, allowInsecure: true))
        env = EnvironmentReader([:])
        XCTAssertEqual(env.outboundAddressPolicy(), Policy())
        XCTAssertTrue(env.problems.isEmpty)
        env = EnvironmentReader(["IDENTITY_ALLOW_PRIVATE_OUTBOUND": "true"])
        XCTAssertEqual(env.outboundAddressPolicy(), Policy())
        XCTAssertEqual(env.problems, ["IDENTITY_ALLOW_PRIVATE_OUTBOUND=true must be 1 or 0"])
    }

    func testTheSettingsRefuseWhatThePolicyRefuses() throws {
        let saved = Policy.current
        defer { Policy.setCurrent(saved) }
        Policy.setCurrent(Policy())
        var update = AppSettingsUpdate()
        update.sms.apiURL = "http://169.254.169.254/"
        XCTAssertEqual(update.problems(offAllowed: false).map(\.setting), ["sms_api_url"])
        update.sms.apiURL = "https://api.twilio.com"
        XCTAssertTrue(update.problems(offAllowed: false).isEmpty)
        // A URL whose shape is already wrong gets that one message, not a second.
        update.sms.apiURL = "https://user:pw@10.0.0.1/"
        XCTAssertEqual(update.problems(offAllowed: false).count, 1)
        update.sms.apiURL = "https://localhost/"
        XCTAssertTrue(update.problems(offAllowed: false).isEmpty, "the gateway's check does no lookup")
        XCTAssertEqual(update.outboundLookupProblems().map(\.setting), ["sms_api_url"])
        // The FCM service account's token_uri, named inside its setting.
        update.sms.apiURL = nil
        let pem = try RSAKey.generate().privateKeyPEM()
        let account = { (uri: String) in
            JSONValue.object(["project_id": .string("p"), "client_email": .string("a@p.iam.gserviceaccount.com"),
                              "private_key": .string(pem), "token_uri": .string(uri)]).serialized
        }
        update.fcmServiceAccountJSON = account("https://169.254.169.254/token")
        let problems = update.problems(offAllowed: false)
        XCTAssertEqual(problems.map(\.setting), ["fcm_service_account"])
        XCTAssertTrue(problems.first?.message.hasPrefix("token_uri must reach a public address") == true, "\(problems)")
        update.fcmServiceAccountJSON = account("https://oauth2.googleapis.com/token")
        XCTAssertTrue(update.problems(offAllowed: false).isEmpty)
        Policy.setCurrent(Policy(allowPrivate: true, allowInsecure: true))
        update.fcmServiceAccountJSON = nil
        update.sms.apiURL = "http://127.0.0.1:9999"
        XCTAssertTrue(update.problems(offAllowed: false).isEmpty)
        XCTAssertTrue(update.outboundLookupProblems().isEmpty)
    }
}
