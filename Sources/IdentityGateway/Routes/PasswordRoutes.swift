import IdentityKit

/// `POST /v1/auth/sign-in` (e-mail or username and password): validated here, executed by the
/// token worker. Sign-up's handler is generated from its declaration (gateway.proto).
struct PasswordRoutes: PasswordApiHandlers {
    let auth: Authenticator
    let commands: CommandSender

    func signIn(_ context: RouteContext) throws -> RouteResult {
        let app = try context.requireApp()
        var body = try BodyReader(context)
        let email = body.optionalString("email", maxLength: 254)
        let identifier = body.optionalString("identifier", maxLength: 254)
        let password = body.requiredString("password")
        let given = email.string ?? identifier.string ?? ""
        if given.isEmpty {
            body.add(.init(location: "body.identifier", message: "email or identifier is required"))
        }
        try body.finish()
        guard let password else { throw ServiceError.validationFailed([]) }
        // The device token of an earlier sign-in (its shape checked; the token worker replaces it).
        let deviceToken = context.request.header("x-device-token").flatMap { SignInDeviceStore.isDeviceToken($0) ? $0 : nil }
        let command = TokenV1.SignIn(appId: app.id, identifier: given, password: password, client: context.clientInfo,
                                     deviceToken: deviceToken ?? "")
        return commands.send(command, expecting: TokenV1.AuthResult.self, appId: app.id, request: context.request) {
            UserJSON.signIn($0)
        }
    }
}

extension RouteContext {
    /// Where the request came from, recorded on the session it starts.
    var clientInfo: CommonV1.ClientInfo {
        CommonV1.ClientInfo(ip: request.clientIP, userAgent: String((request.header("user-agent") ?? "").prefix(512)))
    }
}
