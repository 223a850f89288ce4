import IdentityKit

/// Guests, account deletion with fresh proof, and push devices (PRODUCT.md).
struct AccountRoutes: AccountApiHandlers {
    let auth: Authenticator
    let devices: DeviceStore
    let providers: ProviderRoutes
    let commands: CommandSender


    func guestSignIn(_ context: RouteContext) throws -> RouteResult {
        let app = try context.requireApp()
        var body = try BodyReader(context)
        let secret = body.requiredString("secret")
        if let secret, let problem = FieldRules.guestSecret(secret) {
            body.add(.init(location: "body.secret", message: problem))
        }
        try body.finish()
        guard let secret else { throw ServiceError.validationFailed([]) }
        let command = TokenV1.GuestSignIn(appId: app.id, secret: secret, client: context.clientInfo)
        return commands.send(command, expecting: TokenV1.AuthResult.self, appId: app.id, request: context.request) {
            UserJSON.signIn($0)
        }
    }

    /// Fresh proof decides: `password`, a guest's `secret`, an Apple `identity_token` (with a
    /// new nonce) or a Google `id_token`; with none, the token worker accepts a sign-in less
    /// than 5 minutes old for an account that has none of them (email codes, passkeys).
    /// Provider proofs are verified by the provider worker first; any refusal, there or in the
    /// token worker, is 403 `auth/reauth-required`.
    func deleteMe(_ context: RouteContext) throws -> RouteResult {
        let claims = try context.requireCaller()
        let app = try context.requireApp()
        var body = try BodyReader(optional: context.request.body)
        let password = body.optionalString("password").string
        let secret = body.optionalString("secret").string
        let appleToken = body.optionalString("identity_token", maxLength: 16_384).string
        let googleToken = body.optionalString("id_token", maxLength: 16_384).string
        try body.finish()
        let done: @Sendable (TokenV1.Done) -> HTTPResponse = { _ in .noContent }
        if password != nil || secret != nil {
            let command = TokenV1.DeleteAccount(appId: app.id, uid: claims.sub, password: password, secret: secret,
                                                sessionId: claims.sid)
            return commands.send(command, expecting: TokenV1.Done.self, appId: app.id, request: context.request, render: done)
        }
        guard let provider = appleToken != nil ? "apple" : googleToken != nil ? "google" : nil else {
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

    func registerDevice(_ context: RouteContext) throws -> RouteResult {
        let claims = try context.requireCaller()
        var body = try BodyReader(context)
        let token = body.requiredString("token")
        let platform = body.requiredString("platform")
        let kind = body.requiredString("kind")
        let name = body.optionalString("device_name", maxLength: 100).string
        // At most 512 characters, so at most 2,048 bytes: the unique index on (app_id, token)
        // holds about 2,650 bytes, and a longer token made the insert fail (500).
        if let token, !(1...Self.maximumTokenLength).contains(token.unicodeScalars.count) {
            body.add(.init(location: "body.token", message: "must be 1 to \(Self.maximumTokenLength) characters"))
        }
        if let platform, !["ios", "android", "web"].contains(platform) {
            body.add(.init(location: "body.platform", message: "must be ios, android or web"))
        }
        if let kind, !["apns", "fcm", "voip"].contains(kind) {
            body.add(.init(location: "body.kind", message: "must be apns, fcm or voip"))
        }
        try body.finish()
        guard let token, let platform, let kind else { throw ServiceError.validationFailed([]) }
        let command = TokenV1.RegisterDevice(appId: claims.aud, uid: claims.sub, sessionId: claims.sid, token: token,
                                             platform: platform, kind: kind, deviceName: name)
        return commands.send(command, expecting: TokenV1.DeviceResult.self, appId: claims.aud, request: context.request) {
            HTTPResponse.data($0.device.map(Self.json) ?? .null, status: 201)
        }
    }

    func listDevices(_ context: RouteContext) throws -> RouteResult {
        let claims = try context.requireCaller()
        let items = try devices.list(appId: claims.aud, uid: claims.sub).map { Self.json($0.message) }
        return .now(.data(.array(items)))
    }

    func unregisterDevice(_ context: RouteContext) throws -> RouteResult {
        let claims = try context.requireCaller()
        guard let id = context.request.parameters["id"], id.utf8.count <= 64 else { throw ServiceError.notFound }
        let command = RevocationV1.UnregisterDevice(appId: claims.aud, uid: claims.sub, deviceId: id)
        let requestId = context.request.requestId
        return commands.send(command, expecting: RevocationV1.SessionsEnded.self, queue: BusTopology.revocationCommands,
                             appId: claims.aud, request: context.request) { removed in
            removed.count > 0 ? .noContent : .problem(.notFound, requestId: requestId)
        }
    }

    /// Push tokens are far shorter (APNs 64 hex digits, FCM about 160 characters).
    static let maximumTokenLength = 512

    static func json(_ device: CommonV1.Device) -> JSONValue {
        .object(["id": .string(device.id), "token": .string(device.token), "platform": .string(device.platform),
                 "kind": .string(device.kind), "device_name": JSONValue(device.deviceName),
                 "session_id": .string(device.sessionId), "created_at": .string(device.createdAt)])
    }
}
