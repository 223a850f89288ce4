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

    func testJSONLineKeepsNumbersAndBooleansTyped() throws {
        let fields: LogFields = ["status": 200, "took_ms": UInt64(12), "ratio": 0.5, "cached": true, "route": "/v1/x",
                                 "nan": Double.nan]
        let line = Log.render(.info, "request answered", fields, format: .json, time: "2026-01-01T00:00:00Z")
        XCTAssertTrue(line.contains(#""status":200,"#), line)
        XCTAssertTrue(line.contains(#""cached":true,"#), line)
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        XCTAssertEqual(object["status"] as? Int, 200)
        XCTAssertEqual(object["took_ms"] as? Int, 12)
        XCTAssertEqual(object["ratio"] as? Double, 0.5)
        XCTAssertEqual(object["cached"] as? Bool, true)
        XCTAssertEqual(object["route"] as? String, "/v1/x")
        // JSON has no NaN: written as its text rather than breaking the line.
        XCTAssertEqual(object["nan"] as? String, "nan")
    }

    func testLogfmtWritesTypedValuesAsTheirText() {
        let line = Log.render(.info, "http limits", ["max_connections": 4096, "cached": false, "grace_s": 2.5],
                              format: .logfmt, time: "2026-01-01T00:00:00Z")
        XCTAssertEqual(line, "time=2026-01-01T00:00:00Z level=info msg=\"http limits\" cached=false grace_s=2.5 max_connections=4096\n")
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
