import Foundation
import XCTest
@testable import IdentityMailerWorker
import IdentityKit
import IdentityOutbound

/// The check at connect (`OutboundHTTP.postForm(_:fields:policy:)`): libcurl resolves, and
/// every address is judged just before the socket opens. Port 1 on loopback has no listener, so
/// without the check each request fails to connect, and with it is refused before connecting:
/// the two failures differ only by whether the policy refused.
final class OutboundConnectCheckTests: XCTestCase {
    private let http = OutboundHTTP(timeoutMilliseconds: 1000)
    private let fields = [("To", "+33600000000")]

    /// What the policy refused; nil when the request went out (answered or not).
    private func refusal(_ url: String, _ policy: OutboundAddressPolicy) -> String? {
        do {
            _ = try http.postForm(url, fields: fields, policy: policy)
            return nil
        } catch let failure as OutboundHTTP.Failure {
            return failure.refusal
        } catch {
            XCTFail("\(error)")
            return nil
        }
    }

    override class func setUp() {
        OutboundHTTP.initialize()
    }

    func testLoopbackIsRefusedAtConnectEvenByName() {
        let policy = OutboundAddressPolicy(allowPrivate: false, allowInsecure: true)
        XCTAssertEqual(refusal("http://127.0.0.1:1/", policy), "127.0.0.1 (loopback)")
        // libcurl connects an IPv6 socket to the mapped form: the check sees it as such.
        XCTAssertEqual(refusal("http://[::ffff:127.0.0.1]:1/", policy), "::ffff:127.0.0.1 (loopback)")
        XCTAssertEqual(refusal("http://[::1]:1/", policy), "::1 (loopback)")
        XCTAssertEqual(refusal("http://169.254.169.254:1/", policy), "169.254.169.254 (cloud metadata)")
        // A name is judged by what it resolves to, here through /etc/hosts.
        let byName = refusal("http://localhost:1/", policy)
        XCTAssertTrue(["127.0.0.1 (loopback)", "::1 (loopback)"].contains(byName ?? ""), byName ?? "nil")
    }

    func testTheAllowanceConnectsAndPlainHttpNeedsItsOwn() {
        // Allowed: the request really tries (and fails: nothing listens), no refusal.
        XCTAssertNil(refusal("http://127.0.0.1:1/", OutboundAddressPolicy(allowPrivate: true, allowInsecure: true)))
        // Without the insecure allowance, http is refused before any resolution or connect.
        XCTAssertEqual(refusal("http://127.0.0.1:1/", OutboundAddressPolicy(allowPrivate: true, allowInsecure: false)),
                       "plain http")
    }

    func testAPublicAddressPassesTheCheck() {
        // 192.0.2.0/24 is refused (documentation); 8.8.8.8 passes the check, then answers, fails
        // to connect or times out, whatever network this machine has.
        let policy = OutboundAddressPolicy(allowPrivate: false, allowInsecure: true)
        XCTAssertNil(refusal("http://8.8.8.8:1/", policy))
        XCTAssertEqual(refusal("http://192.0.2.1:1/", policy), "192.0.2.1 (reserved)")
    }

    func testTheSmsTransportDeadLettersARefusalAtOnce() {
        let account = TwilioTransport.Account(apiURL: "http://127.0.0.1:1", accountSid: "AC1", authToken: "t",
                                              from: "+15005550006", messagingServiceSid: nil)
        let refused = TwilioTransport(account: account, http: http,
                                      policy: OutboundAddressPolicy(allowPrivate: false, allowInsecure: true))
        XCTAssertThrowsError(try refused.deliver(to: "+33600000000", body: "x", messageId: "m")) { error in
            guard case ChannelQueues.Failure.permanent(let text) = error else { return XCTFail("\(error)") }
            XCTAssertTrue(text.contains("127.0.0.1 (loopback)") && !text.contains("t@"), text)
        }
        // The worker's own URL (no policy) is not checked: unreachable, so retried.
        let own = TwilioTransport(account: account, http: http)
        XCTAssertThrowsError(try own.deliver(to: "+33600000000", body: "x", messageId: "m")) { error in
            guard case ChannelQueues.Failure.transient = error else { return XCTFail("\(error)") }
        }
    }
}
