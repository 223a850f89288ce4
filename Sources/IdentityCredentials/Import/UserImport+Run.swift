import Foundation
import IdentityKit

/// The import itself (the token worker's `ImportUsers`, `identityctl users import`): each user
/// validated (`ImportedUser`, its password hash included), then written with its hash, its
/// provider identities and its `user.created` event.
extension UserImport {
    public struct Failure: Sendable, Equatable {
        /// The user's position in the call (0-based), or its line number minus one in a file.
        public let index: Int
        public let problem: ImportedUser.Problem
    }

    public struct Report: Sendable {
        /// The uid of each user written, by index.
        public var imported: [(index: Int, uid: String)] = []
        public var failures: [Failure] = []
        /// How many of the imported users came with a hash below the floor (`allowWeakHashes`).
        public var weakHashes = 0

        public init() {}

        public var json: JSONValue { json(indexName: "index", indexOffset: 0) }

        /// The report with indexes named and shifted as the caller counts (a file: line numbers).
        public func json(indexName: String, indexOffset: Int) -> JSONValue {
            .object([
                "imported": .number(Double(imported.count)),
                "failed": .number(Double(failures.count)),
                "weak_hashes": .number(Double(weakHashes)),
                "users": .array(imported.map { .object([indexName: .number(Double($0.index + indexOffset)), "uid": .string($0.uid)]) }),
                "errors": .array(failures.map { failure in
                    var object: [String: JSONValue] = [indexName: .number(Double(failure.index + indexOffset)),
                                                       "code": .string(failure.problem.code),
                                                       "detail": .string(failure.problem.detail)]
                    if let field = failure.problem.field { object["field"] = .string(field) }
                    return .object(object)
                }),
            ])
        }
    }

    /// Imports `users` (at most `maximumPerCall`) into the app; `firstIndex` numbers them in
    /// the report. A password hash below the floor (`ImportedPasswordHash.weakness`) refuses its
    /// user unless `allowWeakHashes`. Store failures other than a taken value (the database
    /// gone) are thrown.
    public func run(appId: String, users: [JSONValue?], firstIndex: Int = 0, allowWeakHashes: Bool = false) throws -> Report {
        precondition(users.count <= Self.maximumPerCall, "callers split imports into calls of at most 1000")
        var report = Report()
        var valid: [(index: Int, user: ImportedUser)] = []
        for (offset, json) in users.enumerated() {
            do throws(ImportedUser.Problem) {
                // nil: a line of a file that was not JSON.
                guard let json else { throw ImportedUser.Problem.invalid("", "not a JSON object") }
                let user = try ImportedUser(json: json)
                if let weakness = user.passwordHash?.weakness, !allowWeakHashes {
                    throw ImportedUser.Problem(code: "import/weak-hash", field: "/password_hash",
                                               detail: weakness + ": import with allow_weak_hashes to accept it "
                                                   + "(it is replaced at the user's next sign-in)")
                }
                valid.append((firstIndex + offset, user))
            } catch {
                report.failures.append(Failure(index: firstIndex + offset, problem: error))
            }
        }
        // One transaction for the call (one commit, not a thousand), each user inside a
        // savepoint of its own: a refused user is rolled back alone and the others stay.
        try pool.transaction { connection in
            for (index, user) in valid {
                try connection.execute("SAVEPOINT imported_user")
                do {
                    report.imported.append((index, try write(user, appId: appId, on: connection)))
                    if user.passwordHash?.weakness != nil { report.weakHashes += 1 }
                    try connection.execute("RELEASE SAVEPOINT imported_user")
                } catch let problem as ImportedUser.Problem {
                    try connection.execute("ROLLBACK TO SAVEPOINT imported_user")
                    report.failures.append(Failure(index: index, problem: problem))
                }
            }
        }
        report.failures.sort { $0.index < $1.index }
        return report
    }

    private func write(_ user: ImportedUser, appId: String, on connection: PGConnection) throws -> String {
        let uid = user.uid ?? Identifiers.nowULID()
        do {
            try connection.query("""
                INSERT INTO users (app_id, uid, email, email_verified, phone, username, first_name, last_name,
                                   photo_url, password_hash)
                VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
                """, [appId, uid, user.email, PGParam.bool(user.emailVerified), user.phone, user.username,
                      user.firstName, user.lastName, user.photoURL, user.passwordHash?.storedForm])
        } catch StoreError.uniqueViolation(let constraint) {
            switch constraint {
            case "users_email_per_app": throw ImportedUser.Problem(code: "import/email-taken", field: "/email", detail: "the email is taken")
            case "users_username_per_app": throw ImportedUser.Problem(code: "import/username-taken", field: "/username", detail: "the username is taken")
            default: throw ImportedUser.Problem(code: "import/uid-taken", field: "/uid", detail: "the uid is taken")
            }
        }
        for (position, identity) in user.providers.enumerated() {
            do {
                try connection.query("""
                    INSERT INTO user_identities (app_id, provider, subject, uid, email) VALUES ($1, $2, $3, $4, $5)
                    """, [appId, identity.provider, identity.subject, uid, identity.email])
            } catch StoreError.uniqueViolation {
                throw ImportedUser.Problem(code: "import/identity-taken", field: "/providers/\(position)",
                                           detail: "this provider identity belongs to another user")
            }
        }
        try Events.userCreated(appId: appId, uid: uid, email: user.email, on: connection)
        return uid
    }
}
