import Foundation
import IdentityKit

/// Passkeys (PRODUCT.md, "Passkey"): every call is a command to the token worker, which runs the
/// ceremonies, keeps the challenges and credentials, and issues the session. The gateway reads
/// no passkey table; it validates bodies and forwards the client's `PublicKeyCredential` JSON.
struct PasskeyRoutes: Sendable {
    let auth: Authenticator
    let commands: CommandSender

    var routes: [Route] {
        [Route(method: "POST", pattern: "/v1/auth/passkey/options", needsApp: true, takesBody: true, limits: .passkeyOptions,
               errors: [.passkeyNotConfigured], handler: signInOptions),
         Route(method: "POST", pattern: "/v1/auth/passkey/verify", needsApp: true, takesBody: true,
               limits: .providerSignIn, errors: [.passkeyNotConfigured, .invalidPasskey, .userDisabled], handler: verify),
         Route(method: "POST", pattern: "/v1/me/passkeys/options", needsApp: true, takesBody: false,
               errors: [.passkeyNotConfigured], proof: .freshSignIn, handler: registrationOptions),
         Route(method: "POST", pattern: "/v1/me/passkeys", needsApp: true, takesBody: true,
               errors: [.passkeyNotConfigured, .invalidPasskey], proof: .freshSignIn, handler: register),
         Route(method: "GET", pattern: "/v1/me/passkeys", needsApp: true, takesBody: false, errors: .signedIn, handler: list),
         Route(method: "PATCH", pattern: "/v1/me/passkeys/{id}", needsApp: true, takesBody: true,
               errors: [.notFound], proof: .freshSignIn, handler: rename),
         Route(method: "DELETE", pattern: "/v1/me/passkeys/{id}", needsApp: true, takesBody: false,
               errors: [.notFound, .lastSignInMethod], proof: .freshSignIn, handler: delete)]
    }

    static let maximumNameLength = 100

    func signInOptions(_ context: RouteContext) throws -> RouteResult {
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

    func verify(_ context: RouteContext) throws -> RouteResult {
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

    func registrationOptions(_ context: RouteContext) throws -> RouteResult {
        let claims = try context.requireCaller()
        let command = TokenV1.PasskeyRegistrationOptions(appId: claims.aud, uid: claims.sub, sessionId: claims.sid)
        return commands.send(command, expecting: TokenV1.PasskeyOptions.self, appId: claims.aud, request: context.request) {
            HTTPResponse.data(Self.options($0))
        }
    }

    func register(_ context: RouteContext) throws -> RouteResult {
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

    func list(_ context: RouteContext) throws -> RouteResult {
        let claims = try auth.liveSession(context)
        let command = TokenV1.ListPasskeys(appId: claims.aud, uid: claims.sub, sessionId: claims.sid)
        return commands.send(command, expecting: TokenV1.PasskeyList.self, appId: claims.aud, request: context.request) {
            HTTPResponse.data(.array($0.passkeys.map(Self.json)))
        }
    }

    func rename(_ context: RouteContext) throws -> RouteResult {
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

    func delete(_ context: RouteContext) throws -> RouteResult {
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
