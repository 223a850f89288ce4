import IdentityKit

/// Guests, account deletion with fresh proof, and push devices (docs/api-contract.md, "Sign-in
/// methods" and "Account"). Guest sign-in and device registration have generated handlers
/// (gateway.proto).
struct AccountRoutes: AccountApiHandlers {
    let auth: Authenticator
    let devices: DeviceStore
    let providers: ProviderRoutes
    let commands: CommandSender

    /// Fresh proof decides: `password`, a guest's `secret`, an Apple `identity_token` (with a
    /// new nonce) or a Google `id_token`; with none, the token worker accepts a sign-in less
    /// than 5 minutes old for an account that has none of them (email codes, passkeys).
    /// Provider proofs are verified by the provider worker first; any refusal, there or in the
    /// token worker, is 403 `auth/reauth-required`.
    func deleteMe(_ context: RouteContext) throws -> RouteResult {
        let claims = try context.requireCaller()
        let app = try context.requireApp()
        let body = try GatewayV1.DeletionProof(declaredBodyOf: context)
        let done: @Sendable (TokenV1.Done) -> HTTPResponse = DeclaredAnswer.done
        if body.password != nil || body.secret != nil {
            let command = TokenV1.DeleteAccount(appId: app.id, uid: claims.sub, password: body.password, secret: body.secret,
                                                sessionId: claims.sid)
            return commands.send(command, expecting: TokenV1.Done.self, appId: app.id, request: context.request, render: done)
        }
        guard let provider = body.identityToken != nil ? "apple" : body.idToken != nil ? "google" : nil else {
            let command = TokenV1.DeleteAccount(appId: app.id, uid: claims.sub, sessionId: claims.sid)
            return commands.send(command, expecting: TokenV1.Done.self, appId: app.id, request: context.request, render: done)
        }
        let proof: ProviderRoutes.ProviderBody
        do {
            proof = try providers.readBody(context, provider: provider, appId: app.id)
        } catch let error as ServiceError where error.status == 422 {
            throw ServiceError.reauthRequired
        }
        return commands.send(proof.verify, expecting: ProviderV1.VerifiedIdentity.self, queue: BusTopology.providerCommands,
                             then: { identity in
                                 TokenV1.DeleteAccount(appId: app.id, uid: claims.sub, identity: identity,
                                                       authorizationCode: proof.authorizationCode, sessionId: claims.sid)
                             }, expecting: TokenV1.Done.self, firstRefusal: .reauthRequired, appId: app.id,
                             request: context.request, render: done)
    }

    func listDevices(_ context: RouteContext) throws -> RouteResult {
        let claims = try context.requireCaller()
        let items = try devices.list(appId: claims.aud, uid: claims.sub).map { AnswerJSON.device($0.message) }
        return .now(.data(.array(items)))
    }

    func unregisterDevice(_ context: RouteContext) throws -> RouteResult {
        let claims = try context.requireCaller()
        guard let id = context.request.parameters["id"] else { throw ServiceError.notFound }
        let command = RevocationV1.UnregisterDevice(appId: claims.aud, uid: claims.sub, deviceId: id)
        let requestId = context.request.requestId
        return commands.send(command, expecting: RevocationV1.SessionsEnded.self, queue: BusTopology.revocationCommands,
                             appId: claims.aud, request: context.request) { removed in
            removed.count > 0 ? .noContent : .problem(.notFound, requestId: requestId)
        }
    }
}
