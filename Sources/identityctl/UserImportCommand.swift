import Foundation
import IdentityCredentials
import IdentityKit

/// `identityctl users import APP_ID FILE.jsonl`: one user per line (`ImportedUser`), written
/// by `UserImport` in calls of 1,000, as `POST /v1/admin/users/import` writes them. Prints the
/// report with line numbers; exits 1 when any line was refused.
enum UserImportCommand {
    static func run(appId: String, file: String, pool: PGPool, allowWeakHashes: Bool = false) throws
        -> (report: JSONValue, failed: Int) {
        guard try AppStore(pool: pool).find(id: appId) != nil else { throw ImportFailure("no app \(appId)") }
        let text = try String(contentsOfFile: file, encoding: .utf8)
        // Line numbers are kept for blank lines too, so the report points at the file's lines.
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
        var numbered: [(line: Int, json: JSONValue?)] = []
        for (index, line) in lines.enumerated() where !line.isEmpty {
            numbered.append((index + 1, JSONValue.parse(Data(line.utf8))))
        }
        let importer = UserImport(pool: pool)
        var imported: [JSONValue] = []
        var errors: [JSONValue] = []
        var weakHashes = 0
        var start = 0
        while start < numbered.count {
            let chunk = Array(numbered[start..<min(start + UserImport.maximumPerCall, numbered.count)])
            let report = try importer.run(appId: appId, users: chunk.map(\.json), allowWeakHashes: allowWeakHashes)
            weakHashes += report.weakHashes
            // Indexes within the chunk → the file's line numbers.
            for entry in report.imported { imported.append(.object(["line": .number(Double(chunk[entry.index].line)),
                                                                      "uid": .string(entry.uid)])) }
            for failure in report.failures {
                var object: [String: JSONValue] = ["line": .number(Double(chunk[failure.index].line)),
                                                   "code": .string(failure.problem.code), "detail": .string(failure.problem.detail)]
                if let field = failure.problem.field { object["field"] = .string(field) }
                errors.append(.object(object))
            }
            start += chunk.count
        }
        let report: JSONValue = .object(["app_id": .string(appId), "imported": .number(Double(imported.count)),
                                         "failed": .number(Double(errors.count)), "weak_hashes": .number(Double(weakHashes)),
                                         "users": .array(imported),
                                         "errors": .array(errors)])
        return (report, errors.count)
    }

    struct ImportFailure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}
