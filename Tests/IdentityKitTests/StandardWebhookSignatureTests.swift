import XCTest
@testable import IdentityKit

final class StandardWebhookSignatureTests: XCTestCase {
    /// The specification's own example
    /// (https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md).
    func testTheSpecificationsExampleSignsAsPublished() throws {
        let key = try XCTUnwrap(StandardWebhookSignature.key(ofSecret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"))
        let body = Array(#"{"test": 2432232314}"#.utf8)
        let signature = StandardWebhookSignature.signature(id: "msg_p5jXN8AQM9LWM0D4loKWxJek", timestamp: 1614265330,
                                                           body: body, key: key)
        XCTAssertEqual(signature, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
    }

    func testEveryLiveSecretSignsAndEachVerifiesAlone() throws {
        let old = try XCTUnwrap(StandardWebhookSignature.key(ofSecret: StandardWebhookSignature.newSecret()))
        let new = try XCTUnwrap(StandardWebhookSignature.key(ofSecret: StandardWebhookSignature.newSecret()))
        let body = Array(#"{"type":"user.created"}"#.utf8)
        let headers = StandardWebhookSignature.headers(id: "msg_1", timestamp: 1_700_000_000, body: body, keys: [new, old])
        let signature = try XCTUnwrap(headers.first { $0.0 == "webhook-signature" }?.1)
        XCTAssertEqual(signature.split(separator: " ").count, 2)
        for key in [old, new] {
            XCTAssertTrue(StandardWebhookSignature.verify(header: signature, id: "msg_1", timestamp: 1_700_000_000,
                                                          body: body, key: key))
        }
        XCTAssertFalse(StandardWebhookSignature.verify(header: signature, id: "msg_2", timestamp: 1_700_000_000,
                                                       body: body, key: new))
        XCTAssertFalse(StandardWebhookSignature.verify(header: signature, id: "msg_1", timestamp: 1_700_000_001,
                                                       body: body, key: new))
    }

    func testASecretMustBeBase64OfSixteenBytesOrMore() {
        XCTAssertNil(StandardWebhookSignature.key(ofSecret: "whsec_not base64!"))
        XCTAssertNil(StandardWebhookSignature.key(ofSecret: "whsec_" + Data(repeating: 1, count: 8).base64EncodedString()))
        XCTAssertTrue(StandardWebhookSignature.newSecret().hasPrefix("whsec_"))
    }
}
