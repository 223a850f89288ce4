import XCTest
@testable import IdentityGateway

final class RequestFramingTests: XCTestCase {
    private func check(_ pairs: [(String, String)], version: String = "HTTP/1.1") -> RequestFraming.Verdict {
        RequestFraming.check(HeaderLines(pairs), httpVersion: version)
    }

    private func assertRefused(_ pairs: [(String, String)], version: String = "HTTP/1.1",
                               file: StaticString = #filePath, line: UInt = #line) {
        if case .acceptable = check(pairs, version: version) {
            XCTFail("accepted \(pairs)", file: file, line: line)
        }
    }

    func testPlainRequestsAreAcceptable() {
        XCTAssertEqual(check([("Host", "x")]), .acceptable(contentLength: nil))
        XCTAssertEqual(check([("Content-Length", "0")]), .acceptable(contentLength: 0))
        XCTAssertEqual(check([("content-length", "17")]), .acceptable(contentLength: 17))
        XCTAssertEqual(check([("Transfer-Encoding", "chunked")]), .acceptable(contentLength: nil))
        XCTAssertEqual(check([("Transfer-Encoding", "CHUNKED")]), .acceptable(contentLength: nil))
    }

    func testRepeatedEqualLengthsAreOneLength() {
        XCTAssertEqual(check([("Content-Length", "5"), ("Content-Length", "5")]), .acceptable(contentLength: 5))
        XCTAssertEqual(check([("Content-Length", "5, 5")]), .acceptable(contentLength: 5))
    }

    func testBothLengthAndEncodingAreRefused() {
        assertRefused([("Content-Length", "5"), ("Transfer-Encoding", "chunked")])
        assertRefused([("Transfer-Encoding", "chunked"), ("Content-Length", "0")])
    }

    func testDifferentLengthsAreRefused() {
        assertRefused([("Content-Length", "5"), ("Content-Length", "6")])
        assertRefused([("Content-Length", "5, 6")])
        assertRefused([("Content-Length", "5"), ("Content-Length", "5, 6")])
    }

    func testLengthsThatAreNotDigitsOrOverflowAreRefused() {
        for bad in ["", " ", "abc", "+5", "-1", "0x5", "1e3", "5 5", "5,", ",5", "5;", "٥",
                    "9223372036854775808", "18446744073709551615", "99999999999999999999999"] {
            assertRefused([("Content-Length", bad)])
        }
        XCTAssertEqual(check([("Content-Length", "9223372036854775807")]),
                       .acceptable(contentLength: Int.max))
    }

    func testEncodingsOtherThanExactlyChunkedAreRefused() {
        for bad in ["gzip", "gzip, chunked", "chunked, chunked", "chunked ", "identity", "", "chunked;q=1"] {
            assertRefused([("Transfer-Encoding", bad)])
        }
        assertRefused([("Transfer-Encoding", "chunked"), ("Transfer-Encoding", "chunked")])
        assertRefused([("Transfer-Encoding", "chunked")], version: "HTTP/1.0")
    }

    func testWhitespaceInAHeaderNameIsRefused() {
        assertRefused([("Content-Length ", "5")])
        assertRefused([("X-Thing\t", "1")])
        assertRefused([("", "1")])
    }
}
