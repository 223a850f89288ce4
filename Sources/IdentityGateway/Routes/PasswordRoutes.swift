import IdentityKit

/// `POST /v1/auth/sign-up` and `POST /v1/auth/sign-in`: validated here, executed by the token
/// worker. A sign-up carrying a guest's token upgrades that guest.
struct PasswordRoutes: PasswordApiHandlers {
    let auth: Authenticator
    let commands: CommandSender


    func signUp(_ context: RouteContext) throws -> RouteResult {
        let app = try context.requireApp()
        var body = try BodyReader(context)
        let email = body.requiredString("email")
        let password = body.requiredString("password")
        let firstName = body.optionalString("first_name", maxLength: 100)
        let lastName = body.optionalString("last_name", maxLength: 100)
        let username = body.optionalString("username", maxLength: 32, validate: FieldRules.username)
        try body.finish()
        guard let email, let password else { throw ServiceError.validationFailed([]) }
        guard EmailAddress.isValid(email) else { throw ServiceError.invalidEmail() }
        if let problem = PasswordPolicy.problem(with: password) { throw ServiceError.weakPassword(problem) }
        let command = TokenV1.SignUp(appId: app.id, email: email, password: password,
                                     firstName: firstName.string, lastName: lastName.string,
                                     username: username.string, client: context.clientInfo,
                                     guestUid: try auth.upgradingGuest(context))
        return commands.send(command, expecting: TokenV1.AuthResult.self, appId: app.id, request: context.request) {
            UserJSON.signIn($0, status: 201)
        }
    }

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
