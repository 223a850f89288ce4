import XCTest
@testable import IdentityKit

/// A row read strictly: what a query did not select, a NULL where a value is required, or a
/// value of the wrong shape throws; only the optional readers accept NULL.
final class PGRowTests: XCTestCase {
    private let row = PGRow(values: ["42", nil, "t", "\\x0aff", "{pwd,\"a b\"}", "x", "1.5"],
                            columns: ["n": 0, "null": 1, "flag": 2, "blob": 3, "list": 4, "text": 5, "real": 6])

    func testValuesOfTheRightShapeAreRead() throws {
        XCTAssertEqual(try row.int("n"), 42)
        XCTAssertEqual(try row.int64("n"), 42)
        XCTAssertEqual(try row.double("real"), 1.5)
        XCTAssertEqual(try row.bool("flag"), true)
        XCTAssertEqual(try row.bytes("blob"), [0x0a, 0xff])
        XCTAssertEqual(try row.stringArray("list"), ["pwd", "a b"])
        XCTAssertEqual(try row.string("text"), "x")
        XCTAssertNil(try row.optionalString("null"))
        XCTAssertNil(try row.optionalBytes("null"))
    }

    func testAMissingColumnANullOrAMisshapenValueThrows() {
        for read in [{ _ = try self.row.string("nope") }, { _ = try self.row.optionalString("nope") },
                     { _ = try self.row.string("null") }, { _ = try self.row.int("null") },
                     { _ = try self.row.int("text") }, { _ = try self.row.bool("n") },
                     { _ = try self.row.bytes("text") }, { _ = try self.row.bytes("null") },
                     { _ = try self.row.stringArray("text") }, { _ = try self.row.double("text") }] {
            XCTAssertThrowsError(try read()) { error in
                guard case StoreError.malformedRow? = error as? StoreError else { return XCTFail("\(error)") }
            }
        }
    }
}
