import IdentityKit

/// Sign in with Apple, Google and Firebase, and signed-in linking. Each call is two commands:
/// the provider worker verifies the id token, then the token worker signs the user in (or
/// links), so the nonce is spent and the account written in one transaction.
struct ProviderRoutes: ProviderApiHandlers {
    let auth: Authenticator
    let commands: CommandSender

    // The declared operations that share a handler, each with its own route.
    func signInWithApple(_ context: RouteContext) throws -> RouteResult { try signIn(context, provider: "apple") }
    func signInWithGoogle(_ context: RouteContext) throws -> RouteResult { try signIn(context, provider: "google") }
    func signInWithIdToken(_ context: RouteContext) throws -> RouteResult { try signIn(context, provider: nil) }

    func nonce(_ context: RouteContext) throws -> RouteResult {
        let app = try context.requireApp()
        return commands.send(ProviderV1.IssueNonce(appId: app.id), expecting: ProviderV1.NonceIssued.self,
                             queue: BusTopology.providerCommands, appId: app.id, request: context.request) {
            HTTPResponse.data(.object(["nonce": .string($0.nonce), "expires_at": .string($0.expiresAt)]))
        }
    }

    /// The body of a provider sign-in, checked field by field.
    struct ProviderBody {
        var verify: ProviderV1.VerifyIdToken
        var firstName: String?
        var lastName: String?
        var authorizationCode: String?
        /// Signed-in linking only: the account's password as fresh proof (see IdentityLinking).
        var password: String?
    }

    /// The body of a provider's sign-in, link or deletion proof, read by its generated reader.
    /// `provider` nil: `/v1/auth/id-token`, whose body names it (only "firebase" for now).
    func readBody(_ context: RouteContext, provider: String?, appId: String) throws -> ProviderBody {
        switch provider {
        case "apple":
            let body = try GatewayV1.AppleSignInRequest(declaredBodyOf: context)
            return ProviderBody(verify: ProviderV1.VerifyIdToken(appId: appId, provider: "apple", idToken: body.identityToken,
                                                                nonce: body.nonce),
                                firstName: body.firstName, lastName: body.lastName,
                                authorizationCode: body.authorizationCode, password: body.password)
        case "google":
            let body = try GatewayV1.GoogleSignInRequest(declaredBodyOf: context)
            return ProviderBody(verify: ProviderV1.VerifyIdToken(appId: appId, provider: "google", idToken: body.idToken,
                                                                nonce: body.nonce),
                                firstName: body.firstName, lastName: body.lastName, password: body.password)
        default:
            let body = try GatewayV1.IdTokenSignInRequest(declaredBodyOf: context)
            return ProviderBody(verify: ProviderV1.VerifyIdToken(appId: appId, provider: body.provider, idToken: body.idToken,
                                                                nonce: body.nonce),
                                firstName: body.firstName, lastName: body.lastName, password: body.password)
        }
    }

    func signIn(_ context: RouteContext, provider: String?) throws -> RouteResult {
        let app = try context.requireApp()
        let body = try readBody(context, provider: provider, appId: app.id)
        let client = context.clientInfo
        let guestUid = try auth.upgradingGuest(context)
        return commands.send(body.verify, expecting: ProviderV1.VerifiedIdentity.self, queue: BusTopology.providerCommands,
                             then: { identity in
                                 TokenV1.ProviderSignIn(appId: app.id, identity: identity, firstName: body.firstName,
                                                        lastName: body.lastName, authorizationCode: body.authorizationCode,
                                                        client: client, guestUid: guestUid)
                             }, expecting: TokenV1.AuthResult.self, appId: app.id, request: context.request) {
            UserJSON.signIn($0)
        }
    }

    func linkIdentity(_ context: RouteContext) throws -> RouteResult {
        let claims = try context.requireCaller()
        let provider = context.request.parameters["provider"] ?? ""
        guard provider == "apple" || provider == "google" else { throw ServiceError.notFound }
        let body = try readBody(context, provider: provider, appId: claims.aud)
        return commands.send(body.verify, expecting: ProviderV1.VerifiedIdentity.self, queue: BusTopology.providerCommands,
                             then: { identity in
                                 TokenV1.LinkIdentity(appId: claims.aud, uid: claims.sub, identity: identity,
                                                      authorizationCode: body.authorizationCode,
                                                      sessionId: claims.sid, password: body.password)
                             }, expecting: TokenV1.UserResult.self, appId: claims.aud, request: context.request) {
            HTTPResponse.data($0.user.map(UserJSON.make) ?? .null)
        }
    }

    func unlinkIdentity(_ context: RouteContext) throws -> RouteResult {
        let claims = try context.requireCaller()
        let provider = context.request.parameters["provider"] ?? ""
        guard ["apple", "google", "firebase"].contains(provider) else { throw ServiceError.notFound }
        let command = TokenV1.UnlinkIdentity(appId: claims.aud, uid: claims.sub, provider: provider, sessionId: claims.sid)
        return commands.send(command, expecting: TokenV1.UserResult.self, appId: claims.aud, request: context.request) { _ in
            .noContent
        }
    }
}
