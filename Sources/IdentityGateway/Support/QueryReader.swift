import Foundation
import IdentityKit

/// Reads query-string arguments one by one, collecting every problem with its location
/// (`query.limit`) so one 422 names them all. Unknown arguments are ignored, as body fields are.
struct QueryReader {
    private let query: [String: String]
    private(set) var problems: [ServiceError.FieldProblem] = []

    init(_ request: HTTPRequest) { query = request.query }

    mutating func string(_ name: String, maxLength: Int = 256) -> String? {
        guard let value = query[name] else { return nil }
        // Sent but empty is an error, not "absent": `?until=` must not silently mean no bound.
        guard !value.isEmpty, value.unicodeScalars.count <= maxLength, !value.utf8.contains(0) else {
            problems.append(.init(location: "query.\(name)", message: "must be 1 to \(maxLength) characters, no NUL"))
            return nil
        }
        return value
    }

    mutating func integer(_ name: String, in range: ClosedRange<Int>) -> Int? {
        guard let text = string(name, maxLength: 12) else { return nil }
        guard let value = Int(text), range.contains(value) else {
            problems.append(.init(location: "query.\(name)", message: DeclaredBounds.message(range)))
            return nil
        }
        return value
    }

    mutating func bool(_ name: String) -> Bool? {
        guard let text = string(name, maxLength: 5) else { return nil }
        switch text {
        case "true": return true
        case "false": return false
        default:
            problems.append(.init(location: "query.\(name)", message: "must be true or false"))
            return nil
        }
    }

    mutating func oneOf(_ name: String, _ allowed: [String]) -> String? {
        guard let text = string(name, maxLength: 32) else { return nil }
        guard allowed.contains(text) else {
            problems.append(.init(location: "query.\(name)", message: "must be one of \(allowed.joined(separator: ", "))"))
            return nil
        }
        return text
    }

    /// An RFC 3339 time, returned as microseconds since the epoch.
    mutating func time(_ name: String) -> Int64? {
        guard let text = string(name, maxLength: 40) else { return nil }
        guard let date = Self.parseTime(text) else {
            problems.append(.init(location: "query.\(name)", message: "must be an RFC 3339 time, e.g. 2026-09-27T10:15:00Z"))
            return nil
        }
        return Int64((date.timeIntervalSince1970 * 1_000_000).rounded())
    }

    static func parseTime(_ text: String) -> Date? {
        let plain = ISO8601DateFormatter()
        plain.formatOptions = [.withInternetDateTime]
        let fractional = ISO8601DateFormatter()
        fractional.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let upper = text.uppercased()  // RFC 3339 allows a lower-case t and z
        return fractional.date(from: upper) ?? plain.date(from: upper)
    }

    mutating func add(_ problem: ServiceError.FieldProblem) { problems.append(problem) }

    func finish() throws {
        if !problems.isEmpty { throw ServiceError.validationFailed(problems) }
    }
}
