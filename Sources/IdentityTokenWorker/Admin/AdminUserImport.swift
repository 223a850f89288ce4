import Foundation
import IdentityCredentials
import IdentityKit

/// `identity.admin.v1.ImportUsers`: the admin API's user import, through the same `UserImport`
/// as `identityctl users import` (each user validated, then written in a transaction of its own).
struct AdminUserImport: Sendable {
    let importer: UserImport

    func handle(_ command: AdminV1.ImportUsers) throws -> AdminV1.UsersImported {
        // The gateway checked the shape; a command that does not hold an array of at most
        // 1,000 is refused whole rather than half-imported.
        guard case .array(let users)? = JSONValue.parse(Data(command.usersJson.utf8), maximumBytes: 4 << 20),
              users.count <= UserImport.maximumPerCall else {
            throw ServiceError.validationFailed([.init(location: "body.users", message: "must be an array of 1 to 1000 users")])
        }
        let report = try importer.run(appId: command.appId, users: users, allowWeakHashes: command.allowWeakHashes)
        Log.info("users imported", ["app_id": command.appId, "imported": report.imported.count,
                                    "failed": report.failures.count, "weak_hashes": report.weakHashes,
                                    "actor": command.actor])
        return AdminV1.UsersImported(reportJson: report.json.serialized)
    }
}
