import Foundation
import IdentityKit

/// `POST /v1/admin/users/import` and `POST /v1/admin/keys/rotate`: the app's backend imports
/// users (with their old password hashes) and rotates its token-signing key, with its secret
/// key. Both are commands to the token worker, which writes users and alone holds the master
/// key; `identityctl users import` and `identityctl keys rotate` run the same code.
struct AdminImportAndKeyRoutes: AdminKeyApiHandlers {
    let commands: CommandSender


    /// `{"users": [...]}`, 1 to 1,000 user objects (docs/flows.md, "Importing users"; the body may be
    /// up to 2 MiB here). Each user is checked and written on its own: the answer is 200 with
    /// the uid of each imported user and an error for each refused one, by index.
    func adminImportUsers(_ context: RouteContext) throws -> RouteResult {
        let caller = try context.requireAdmin()
        guard case .object(let body)? = context.json else {
            throw ServiceError.validationFailed([.init(location: "body", message: "must be a JSON object")])
        }
        if let unknown = body.keys.sorted().first(where: { $0 != "users" && $0 != "allow_weak_hashes" }) {
            throw ServiceError.validationFailed([.init(location: "body.\(unknown)", message: "unknown field")])
        }
        var allowWeakHashes = false
        switch body["allow_weak_hashes"] {
        case nil: break
        case .bool(let flag)?: allowWeakHashes = flag
        default: throw ServiceError.validationFailed([.init(location: "body.allow_weak_hashes", message: "must be true or false")])
        }
        guard case .array(let users)? = body["users"], (1...UserImport.maximumPerCall).contains(users.count) else {
            throw ServiceError.validationFailed([.init(location: "body.users", message: "must be an array of 1 to 1000 users")])
        }
        if let index = users.firstIndex(where: { if case .object = $0 { false } else { true } }) {
            throw ServiceError.validationFailed([.init(location: "body.users[\(index)]", message: "must be a JSON object")])
        }
        // A field of the wrong JSON type is a malformed request (422 for the call, as the schema
        // says); what is well-typed but unacceptable (a taken email, a bad hash) is that user's
        // own error in the report.
        for (index, user) in users.enumerated() {
            guard case .object(let fields) = user else { continue }
            for (name, value) in fields {
                if let problem = Self.typeProblem(name, value) {
                    throw ServiceError.validationFailed([.init(location: "body.users[\(index)].\(name)", message: problem)])
                }
            }
        }
        let command = AdminV1.ImportUsers(appId: caller.app.id, usersJson: JSONValue.array(users).serialized, actor: caller.actor,
                                          allowWeakHashes: allowWeakHashes)
        return commands.send(command, expecting: AdminV1.UsersImported.self, appId: caller.app.id, request: context.request) {
            guard let report = JSONValue.parse(Data($0.reportJson.utf8), maximumBytes: 4 << 20) else {
                return HTTPResponse.problem(.internal, requestId: context.request.requestId)
            }
            return HTTPResponse.data(report)
        }
    }

    /// The JSON type each known field of an imported user must have (`nil`: fine, or unknown,
    /// which the importer reports for that user).
    static func typeProblem(_ name: String, _ value: JSONValue) -> String? {
        switch (name, value) {
        case ("uid", .string), ("email", .string), ("username", .string), ("first_name", .string),
             ("last_name", .string), ("phone", .string), ("photo_url", .string):
            return nil
        case ("uid", _), ("email", _), ("username", _), ("first_name", _), ("last_name", _), ("phone", _), ("photo_url", _):
            return "must be a string"
        case ("email_verified", .bool): return nil
        case ("email_verified", _): return "must be true or false"
        case ("password_hash", .object): return nil
        case ("password_hash", _): return "must be an object"
        case ("providers", .array(let items)):
            return items.allSatisfy { if case .object = $0 { true } else { false } } ? nil : "must be an array of objects"
        case ("providers", _): return "must be an array"
        default: return nil
        }
    }

    /// `{"alg": "RS256" | "ES256" | "EdDSA"}` (optional: the current key's algorithm). The new
    /// key is published at once and signs from `signs_from`, one JWKS cache period later.
    func adminRotateSigningKey(_ context: RouteContext) throws -> RouteResult {
        let caller = try context.requireAdmin()
        let body = try GatewayV1.RotateSigningKeyRequest(declaredBodyOf: context)
        let command = AdminV1.RotateSigningKey(appId: caller.app.id, alg: body.alg ?? "", actor: caller.actor)
        return commands.send(command, expecting: AdminV1.SigningKeyRotated.self, appId: caller.app.id, request: context.request) {
            HTTPResponse.data(.object([
                "kid": .string($0.kid), "alg": .string($0.alg), "state": .string("next"),
                "signs_from": .string($0.signsFrom),
                "replaces": $0.replaces.isEmpty ? .null : .string($0.replaces),
                "replaced_retires_at": $0.replacedRetiresAt.isEmpty ? .null : .string($0.replacedRetiresAt),
            ]), status: 201)
        }
    }
}
