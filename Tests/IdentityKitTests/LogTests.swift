import Foundation
import XCTest
@testable import IdentityKit

final class LogTests: XCTestCase {
    func testLogfmtLine() {
        let line = Log.render(.info, "mail sent", ["request_id": "req_1", "kind": "email code"], format: .logfmt,
                              time: "2026-01-01T00:00:00Z")
        XCTAssertEqual(line, "time=2026-01-01T00:00:00Z level=info msg=\"mail sent\" kind=\"email code\" request_id=req_1\n")
    }

    func testJSONLineIsOneParsableObject() throws {
        let line = Log.render(.warning, "odd \"value\"\n", ["error": "tab\there\u{1}", "msg": "not twice"], format: .json,
                              time: "2026-01-01T00:00:00Z")
        XCTAssertTrue(line.hasSuffix("}\n"))
        XCTAssertEqual(line.filter { $0 == "\n" }.count, 1)
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: String])
        XCTAssertEqual(object, ["time": "2026-01-01T00:00:00Z", "level": "warning", "msg": "odd \"value\"\n",
                                "error": "tab\there\u{1}"])
    }

    func testRequestIdScopeIsBoundToTheWork() {
        XCTAssertNil(Log.requestId)
        Log.withRequestId("req_abc") {
            XCTAssertEqual(Log.requestId, "req_abc")
            Log.withRequestId("") { XCTAssertEqual(Log.requestId, "req_abc") }
        }
        XCTAssertNil(Log.requestId)
    }
}
