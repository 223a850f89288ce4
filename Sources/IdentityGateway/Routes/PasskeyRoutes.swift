import Foundation
import IdentityKit

/// Passkeys (PRODUCT.md, "Passkey"): every call is a command to the token worker, which runs the
/// ceremonies, keeps the challenges and credentials, and issues the session. The gateway reads
/// no passkey table; it validates bodies and forwards the client's `PublicKeyCredential` JSON.
struct PasskeyRoutes: PasskeyApiHandlers {
    let auth: Authenticator
    let commands: CommandSender


    static let maximumNameLength = 100

    func passkeySignInOptions(_ context: RouteContext) throws -> RouteResult {
        let app = try context.requireApp()
        var body = try BodyReader(context)
        let identifier = body.optionalString("identifier", maxLength: 254).string
        try body.finish()
        let command = TokenV1.PasskeySignInOptions(appId: app.id, identifier: identifier)
        return commands.send(command, expecting: TokenV1.PasskeyOptions.self, appId: app.id, request: context.request) {
            HTTPResponse.data(.object(["flow_id": .string($0.flowId), "options": Self.options($0),
                                       "has_passkeys": .bool($0.hasPasskeys)]))
        }
    }

    func passkeySignInVerify(_ context: RouteContext) throws -> RouteResult {
        let app = try context.requireApp()
        var body = try BodyReader(context)
        let flowId = body.requiredString("flow_id")
        let response = body.requiredObject("response")
        if let flowId, flowId.utf8.count > 64 { body.add(.init(location: "body.flow_id", message: "must be at most 64 characters")) }
        try body.finish()
        guard let flowId, let response else { throw ServiceError.validationFailed([]) }
        let command = TokenV1.VerifyPasskey(appId: app.id, flowId: flowId, responseJson: response.serialized,
                                            client: context.clientInfo)
        return commands.send(command, expecting: TokenV1.AuthResult.self, appId: app.id, request: context.request) {
            UserJSON.signIn($0)
        }
    }

    func passkeyRegistrationOptions(_ context: RouteContext) throws -> RouteResult {
        let claims = try context.requireCaller()
        let command = TokenV1.PasskeyRegistrationOptions(appId: claims.aud, uid: claims.sub, sessionId: claims.sid)
        return commands.send(command, expecting: TokenV1.PasskeyOptions.self, appId: claims.aud, request: context.request) {
            HTTPResponse.data(Self.options($0))
        }
    }

    func registerPasskey(_ context: RouteContext) throws -> RouteResult {
        let claims = try context.requireCaller()
        var body = try BodyReader(context)
        let response = body.requiredObject("response")
        let name = body.optionalString("name", maxLength: Self.maximumNameLength).string
        try body.finish()
        guard let response else { throw ServiceError.validationFailed([]) }
        let command = TokenV1.FinishPasskeyRegistration(appId: claims.aud, uid: claims.sub, sessionId: claims.sid,
                                                        responseJson: response.serialized, name: name)
        return commands.send(command, expecting: TokenV1.PasskeyResult.self, appId: claims.aud, request: context.request) {
            HTTPResponse.data($0.passkey.map(Self.json) ?? .null, status: 201)
        }
    }

    func listPasskeys(_ context: RouteContext) throws -> RouteResult {
        let claims = try context.requireCaller()
        let command = TokenV1.ListPasskeys(appId: claims.aud, uid: claims.sub, sessionId: claims.sid)
        return commands.send(command, expecting: TokenV1.PasskeyList.self, appId: claims.aud, request: context.request) {
            HTTPResponse.data(.array($0.passkeys.map(Self.json)))
        }
    }

    func renamePasskey(_ context: RouteContext) throws -> RouteResult {
        let claims = try context.requireCaller()
        guard let id = context.request.parameters["id"], id.utf8.count <= 64 else { throw ServiceError.notFound }
        var body = try BodyReader(context)
        let name = body.requiredString("name")
        if let name, !(1...Self.maximumNameLength).contains(name.unicodeScalars.count) {
            body.add(.init(location: "body.name", message: "must be 1 to \(Self.maximumNameLength) characters"))
        }
        try body.finish()
        guard let name else { throw ServiceError.validationFailed([]) }
        let command = TokenV1.RenamePasskey(appId: claims.aud, uid: claims.sub, sessionId: claims.sid, passkeyId: id,
                                            name: name)
        return commands.send(command, expecting: TokenV1.PasskeyResult.self, appId: claims.aud, request: context.request) {
            HTTPResponse.data($0.passkey.map(Self.json) ?? .null)
        }
    }

    func deletePasskey(_ context: RouteContext) throws -> RouteResult {
        let claims = try context.requireCaller()
        guard let id = context.request.parameters["id"], id.utf8.count <= 64 else { throw ServiceError.notFound }
        let command = TokenV1.DeletePasskey(appId: claims.aud, uid: claims.sub, sessionId: claims.sid, passkeyId: id)
        return commands.send(command, expecting: TokenV1.Done.self, appId: claims.aud, request: context.request) { _ in
            .noContent
        }
    }

    /// The worker's options JSON as a JSON value of the answer (it made it; it parses).
    static func options(_ reply: TokenV1.PasskeyOptions) -> JSONValue {
        JSONValue.parse(Data(reply.optionsJson.utf8)) ?? .object([:])
    }

    static func json(_ passkey: TokenV1.Passkey) -> JSONValue {
        .object(["id": .string(passkey.id), "name": .string(passkey.name), "credential_id": .string(passkey.credentialId),
                 "transports": JSONValue(passkey.transports), "aaguid": .string(passkey.aaguid),
                 "backup_eligible": .bool(passkey.backupEligible), "backup_state": .bool(passkey.backupState),
                 "created_at": .string(passkey.createdAt), "last_used_at": JSONValue(passkey.lastUsedAt)])
    }
}
