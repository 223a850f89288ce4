import IdentityKit

/// Who may call an operation (proto/identity/options/v1/options.proto, `Access`): declared once
/// per rpc in proto/identity/gateway/v1/gateway.proto, and what the pipeline checks before the
/// handler runs (`Gateway.dispatch`).
enum Access: Sendable, Equatable {
    /// No app, no caller (discovery).
    case `public`
    /// `X-App-Key` (or the app's verified domain).
    case appKey
    /// `X-App-Key`; a guest's access token, when sent, is upgraded (the handler reads it).
    case guest
    /// `X-App-Key`, with or without an access token; one that is sent must verify (the handler reads it).
    case bearerOptional
    /// A live session's access token.
    case bearer
    /// A live session signed in within the step-up window (`FreshProofStep`).
    case bearerFresh
    /// The same, or the account's password in the body's `password` field.
    case bearerFreshOrPassword
    /// A live session whose body carries its own proof the worker checks.
    case bearerOwnProof
    /// The app's secret key (admin API, introspection).
    case secretKey
    /// Bus only: no route (never in `DeclaredOperation.all`).
    case `internal`

    /// The proof the pipeline's `FreshProofStep` asks for, beyond a valid token.
    var proof: Proof {
        switch self {
        case .bearerFresh: .freshSignIn
        case .bearerFreshOrPassword: .freshSignInOrPassword
        case .bearerOwnProof: .ownProof
        default: .none
        }
    }

    /// Whether the pipeline verifies the caller's access token before the handler.
    var verifiesCaller: Bool { [.bearer, .bearerFresh, .bearerFreshOrPassword, .bearerOwnProof].contains(self) }
}

/// One operation of the HTTP API as proto/ declares it: generated (`Generated/Operations.swift`),
/// never written by hand. `Route(_:handler:)` turns it into a route of the table.
struct DeclaredOperation: Sendable {
    /// The rpc's name in lowerCamelCase: the handler's name and the document's `operationId`.
    let id: String
    let service: String
    let method: String
    let pattern: String
    let access: Access
    /// The success status.
    let status: Int
    let takesBody: Bool
    let limits: [RouteLimit]
    /// The errors beyond those its access and body imply (`Gateway.pipelineErrors`).
    let errors: [ServiceError]
    /// The audit log's action of an admin operation.
    let audit: String?
    /// A BEARER read whose own query checks the session is live.
    let sessionCheckedByHandler: Bool
    /// An APP_KEY sign-in or refresh whose success only adds a session: its answer does not wait
    /// for this replica to hear the store's changes (`CommandSender`).
    let onlyAddsSessions: Bool
    /// A BEARER operation that ends another of the caller's sessions, or all of them: with the
    /// app's `session_end_proof` `fresh`, the caller's session must be fresh (`FreshProofStep`).
    let sessionEnd: Bool
    /// The proto name of the command the route sends; nil when the gateway answers itself.
    let command: String?
    /// What the API document says of it beyond the rules above.
    let document: Document

    struct Document: Sendable {
        let summary: String
        let description: String?
        /// Shared components: the body's schema, the success answer (a shape's response of
        /// answers.proto), parameters.
        let request: String?
        let response: String?
        let parameters: [String]
        /// A sign-in: 202 with an MFA challenge (`MfaRequired`) once the user has a second factor.
        let mfaChallenge: Bool
        /// The body's JSON Schema, generated from its command's fields (an operation whose
        /// handler is generated): the document's, unless `request` names a shared schema,
        /// which must then agree with it (RequestSchemaDriftTests).
        let generatedRequest: String?
    }
}

extension DeclaredOperation {
    /// The commands whose success answers go at once (`onlyAddsSessions`): those that every
    /// operation sending them declares so. Any other command (a bus-only one too) waits.
    static let commandsOnlyAddingSessions: Set<String> = {
        let sending = all.filter { $0.command != nil }
        let flagged = Set(sending.filter(\.onlyAddsSessions).compactMap(\.command))
        return flagged.subtracting(sending.filter { !$0.onlyAddsSessions }.compactMap(\.command))
    }()
}

extension Route {
    /// The route of a declared operation: everything the pipeline checks comes from the declaration.
    init(_ operation: DeclaredOperation, handler: @escaping @Sendable (RouteContext) throws -> RouteResult) {
        let secretKey: SecretKeyUse? = operation.access == .secretKey
            ? (operation.audit.map { SecretKeyUse.admin($0) } ?? .oauthClient) : nil
        self.init(method: operation.method, pattern: operation.pattern,
                  needsApp: operation.access != .public && operation.access != .secretKey,
                  takesBody: operation.takesBody, limits: operation.limits, errors: operation.errors,
                  secretKey: secretKey, proof: operation.access.proof, handler: handler)
        self.operation = operation
    }
}
