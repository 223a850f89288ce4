import Foundation
import XCTest

@testable import IdentityKit

/// docs/flows.md's table of rate limits is what users read to tune them: every limit of
/// `RateLimitCatalogue` has its row there with its default, and the table names no other.
final class RateLimitTableTests: XCTestCase {
    /// `| \`name\` | COUNT / WINDOW | …` rows of the table.
    private func documentedDefaults() throws -> [String: String] {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let text = try String(contentsOf: root.appendingPathComponent("docs/flows.md"), encoding: .utf8)
        var rows: [String: String] = [:]
        for line in text.split(separator: "\n") where line.hasPrefix("| `") {
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count >= 2, cells[0].hasPrefix("`"), cells[0].hasSuffix("`"), cells[1].contains(" / ") else { continue }
            rows[String(cells[0].dropFirst().dropLast())] = cells[1]
        }
        return rows
    }

    static func written(_ policy: RateLimitPolicy) -> String {
        let window = Int(policy.window)
        let unit = window % 3600 == 0 ? "\(window / 3600) h" : window % 60 == 0 ? "\(window / 60) min" : "\(window) s"
        return "\(policy.count) / \(unit)"
    }

    func testEveryLimitHasItsRowWithItsDefault() throws {
        let rows = try documentedDefaults()
        for policy in RateLimitCatalogue.all {
            XCTAssertEqual(rows[policy.name], Self.written(policy), "docs/flows.md, the rate-limit table: \(policy.name)")
        }
    }

    func testTheTableNamesNoOtherLimit() throws {
        let known = Set(RateLimitCatalogue.all.map(\.name))
        for name in try documentedDefaults().keys {
            XCTAssertTrue(known.contains(name), "docs/flows.md lists \(name), which RateLimitCatalogue does not have")
        }
    }
}
