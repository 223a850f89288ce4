import IdentityKit

/// `POST /v1/auth/sign-in` (e-mail or username and password, its body read by the generated
/// `GatewayV1.SignInRequest` reader), executed by the token worker. Sign-up's handler is
/// generated from its declaration (gateway.proto).
struct PasswordRoutes: PasswordApiHandlers {
    let auth: Authenticator
    let commands: CommandSender

    func signIn(_ context: RouteContext) throws -> RouteResult {
        let app = try context.requireApp()
        let body = try GatewayV1.SignInRequest(declaredBodyOf: context)
        // The device token of an earlier sign-in (its shape checked; the token worker replaces it).
        let deviceToken = context.request.header("x-device-token").flatMap { SignInDeviceStore.isDeviceToken($0) ? $0 : nil }
        let command = TokenV1.SignIn(appId: app.id, identifier: body.email ?? body.identifier ?? "", password: body.password,
                                     client: context.clientInfo, deviceToken: deviceToken ?? "")
        return commands.send(command, expecting: TokenV1.AuthResult.self, appId: app.id, request: context.request,
                             render: DeclaredAnswer.signedIn(status: 200))
    }
}

extension RouteContext {
    /// Where the request came from, recorded on the session it starts.
    var clientInfo: CommonV1.ClientInfo {
        CommonV1.ClientInfo(ip: request.clientIP, userAgent: String((request.header("user-agent") ?? "").prefix(512)))
    }
}
