import Foundation
import XCTest
@testable import IdentityGateway
@testable import IdentityKit

final class BodyReaderTests: XCTestCase {
    private func reader(_ json: String) throws -> BodyReader {
        try BodyReader(parsed: XCTUnwrap(JSONValue.parse(Data(json.utf8))))
    }

    /// Lengths are counted as the OpenAPI document's `maxLength` counts them (JSON Schema:
    /// Unicode scalars), not as Swift's grapheme clusters. The fuzzer's boundary probe found
    /// 120 characters of "e" + U+0301 accepted as a first name limited to 100.
    func testMaxLengthCountsUnicodeScalarsAsTheDocumentDoes() throws {
        var over = try reader(#"{"first_name": "\#(String(repeating: "e\\u0301", count: 51))"}"#)
        _ = over.optionalString("first_name", maxLength: 100)
        XCTAssertEqual(over.problems.map(\.location), ["body.first_name"])

        var fits = try reader(#"{"first_name": "\#(String(repeating: "e\\u0301", count: 50))"}"#)
        XCTAssertEqual(fits.optionalString("first_name", maxLength: 100).string?.unicodeScalars.count, 100)
        XCTAssertEqual(fits.problems, [])

        var astral = try reader(#"{"first_name": "\#(String(repeating: "\\ud83d\\ude00", count: 100))"}"#)
        _ = astral.optionalString("first_name", maxLength: 100)
        XCTAssertEqual(astral.problems, [], "100 emoji are 100 characters (400 bytes)")
    }
}
