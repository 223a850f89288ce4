import XCTest
@testable import IdentityKit
@testable import IdentityProviderWorker

/// The provider worker answers exactly the commands gateway.proto routes to it; any other type
/// finds no entry (and `CommandReplies.answer` answers it `auth/internal`).
final class ProviderDispatchTests: XCTestCase {
    func testTheTableKnowsEachProviderCommandAndNothingElse() {
        XCTAssertEqual(Set(ProviderCommandDispatch.table.keys),
                       [ProviderV1.IssueNonce.protoName, ProviderV1.VerifyIdToken.protoName,
                        ProviderV1.ExchangeAppleCode.protoName, ProviderV1.VerifyAppleNotification.protoName])
        XCTAssertNil(ProviderCommandDispatch.table[TokenV1.ProviderSignIn.protoName])
    }
}
