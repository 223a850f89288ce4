import Foundation
import XCTest
@testable import IdentityKit

final class ProcessMetricsTests: XCTestCase {
    func testStatFieldsAreCountedFromAfterTheCommandName() throws {
        // proc(5): a command name may hold spaces and parentheses; utime 14, stime 15,
        // starttime 22, vsize 23, rss 24.
        let text = "4242 (identity (x) y) S 1 4242 4242 0 -1 4194560 1200 0 0 0 250 75 0 0 20 0 9 0 "
            + "123456 987654321 4321 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n"
        let stat = try XCTUnwrap(ProcessMetrics.Stat(parsing: text))
        XCTAssertEqual(stat.userTicks, 250)
        XCTAssertEqual(stat.systemTicks, 75)
        XCTAssertEqual(stat.startTicks, 123_456)
        XCTAssertEqual(stat.virtualBytes, 987_654_321)
        XCTAssertEqual(stat.residentPages, 4321)
        XCTAssertNil(ProcessMetrics.Stat(parsing: "4242 (cut short) S 1 2"))
    }

    func testBootTimeIsReadFromTheBtimeLine() {
        XCTAssertEqual(ProcessMetrics.bootTime("cpu  1 2 3\nintr 5\nbtime 1764000000\nprocesses 9\n"), 1_764_000_000)
        XCTAssertNil(ProcessMetrics.bootTime("cpu  1 2 3\n"))
        XCTAssertNil(ProcessMetrics.bootTime(nil))
    }

    func testThisProcessStatIsReadable() throws {
        let text = try String(contentsOfFile: "/proc/self/stat", encoding: .utf8)
        let stat = try XCTUnwrap(ProcessMetrics.Stat(parsing: text))
        XCTAssertGreaterThan(stat.residentPages, 0)
        XCTAssertNotNil(ProcessMetrics.bootTime())
    }

    func testPoolUsageCountsLiveIdleAndMaxConnections() {
        let before = PGPool.usage()
        var pool: PGPool? = PGPool(url: "postgresql://nobody@127.0.0.1:1/none", size: 7)
        XCTAssertNotNil(pool)
        let during = PGPool.usage()
        XCTAssertEqual(during.size - before.size, 7)
        XCTAssertEqual(during.inUse - before.inUse, 0)
        pool = nil
        XCTAssertEqual(PGPool.usage().size, before.size)
    }
}
