import Foundation
import IdentityKit

extension ConsoleSite {
    /// The audit row of a console action that is the admin API operation `operation`, under that
    /// operation's own declared action (its `audit` option in gateway.proto, generated into
    /// `DeclaredOperation.audit`): the console and the admin API read alike in the log, and a
    /// renamed action cannot leave the console behind.
    func audit(_ operation: DeclaredOperation, appId: String, user: Session, target: String, request: HTTPRequest,
               detail: [String: JSONValue] = [:]) throws {
        guard let action = operation.audit else {
            preconditionFailure("\(operation.id) declares no audit action: only admin operations are console actions")
        }
        try audit(action, appId: appId, user: user, target: target, request: request, detail: detail)
    }
}
