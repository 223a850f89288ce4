import Foundation
import XCTest
@testable import IdentityKit

/// The hand-written fast paths of response writing (timestamps, JSON strings) against what the
/// slower general code produced.
final class ResponseWritingTests: XCTestCase {
    func testRFC3339MatchesTheFormatString() {
        for micros: Int64 in [0, 1, 999_999, 1_700_000_000_123_456, 1_796_039_145_000_001, 253_402_300_799_999_999] {
            var seconds = time_t(micros / 1_000_000)
            var parts = tm()
            gmtime_r(&seconds, &parts)
            let expected = String(format: "%04d-%02d-%02dT%02d:%02d:%02d.%06dZ",
                                  Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1, Int(parts.tm_mday),
                                  Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec), Int(micros % 1_000_000))
            XCTAssertEqual(Timestamp.rfc3339(microsecondsSinceEpoch: micros), expected)
        }
    }

    func testJSONStringsEscapeOnlyWhatMustBeEscaped() {
        XCTAssertEqual(JSONValue.string("plain ascii é ✓").serialized, "\"plain ascii é ✓\"")
        XCTAssertEqual(JSONValue.string("a\"b\\c\nd\re\tf<g\u{01}").serialized,
                       "\"a\\\"b\\\\c\\nd\\re\\tf\\u003cg\\u0001\"")
        let object = JSONValue.object(["k<": .string("v"), "a": .null])
        XCTAssertEqual(object.serialized, "{\"a\":null,\"k\\u003c\":\"v\"}")
        XCTAssertNotNil(JSONValue.parse(Data(JSONValue.string("x\u{1F}y\"").serialized.utf8)))
    }
}
