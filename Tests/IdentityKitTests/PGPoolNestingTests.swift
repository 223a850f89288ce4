import Foundation
import XCTest
@testable import IdentityKit

/// A thread that holds a connection and asks the same pool for another waits on itself once
/// every connection is held that way: the pool reports it (the end-to-end tests fail on the
/// report), and a companion pool is the way to a second connection. On a real database
/// (`IDENTITY_TEST_DATABASE_URL`; skipped without it).
final class PGPoolNestingTests: XCTestCase {
    private var url = ""

    override func setUpWithError() throws {
        guard let url = ProcessInfo.processInfo.environment["IDENTITY_TEST_DATABASE_URL"], !url.isEmpty else {
            throw XCTSkip("IDENTITY_TEST_DATABASE_URL is unset: pool tests need a PostgreSQL database")
        }
        self.url = url
    }

    private func nestedCount() -> Int {
        let line = ServiceMetrics.registry.render().split(separator: "\n")
            .first { $0.hasPrefix("identity_db_pool_nested_acquires_total ") }
        return line.flatMap { Int(Double($0.split(separator: " ")[1]) ?? -1) } ?? 0
    }

    func testASecondConnectionFromAFullPoolWaitsOnItselfAndIsReported() throws {
        let pool = PGPool(url: url, size: 1, acquireTimeout: 0.2)
        let before = nestedCount()
        try pool.withConnection { _ in
            XCTAssertThrowsError(try pool.withConnection { _ in }) { error in
                guard case StoreError.unavailable = error else { return XCTFail("\(error)") }
            }
        }
        XCTAssertEqual(nestedCount(), before + 1)
        // Released: the thread holds nothing now, and one connection at a time is no report.
        try pool.withConnection { _ in }
        XCTAssertEqual(nestedCount(), before + 1)
    }

    func testACompanionPoolLendsASecondConnectionWithoutAReport() throws {
        let pool = PGPool(url: url, size: 1, acquireTimeout: 0.2)
        let companion = pool.companion(size: 1)
        let before = nestedCount()
        let answer = try pool.withConnection { _ in
            try companion.withConnection { try $0.query("SELECT 7 AS n", []).first?.string("n") }
        }
        XCTAssertEqual(answer, "7")
        XCTAssertEqual(nestedCount(), before)
    }

    func testAnotherThreadWaitingForTheOnlyConnectionIsNoReport() throws {
        let pool = PGPool(url: url, size: 1, acquireTimeout: 2)
        let before = nestedCount()
        let done = expectation(description: "the other thread got the connection")
        try pool.withConnection { _ in
            DispatchQueue.global().async {
                _ = try? pool.withConnection { _ in }
                done.fulfill()
            }
            Thread.sleep(forTimeInterval: 0.1)
        }
        wait(for: [done], timeout: 5)
        XCTAssertEqual(nestedCount(), before)
    }
}
