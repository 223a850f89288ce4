import IdentityKit

/// Email codes, password recovery and change, email verification (PRODUCT.md, "Email code"
/// and "Account"). Answers never wait for SMTP: the mail is queued for the mailer worker.
struct EmailRoutes: EmailApiHandlers {
    let auth: Authenticator
    let commands: CommandSender


    private static func accepted(_ reply: TokenV1.Accepted) -> HTTPResponse {
        .data(.object(["expires_in": JSONValue(Int(reply.expiresIn))]), status: 202)
    }

    /// `{email}` bodies: a well-formed address, or 422 `auth/invalid-email`.
    private func email(_ body: inout BodyReader) throws -> String {
        let email = body.requiredString("email")
        try body.finish()
        guard let email else { throw ServiceError.validationFailed([]) }
        guard EmailAddress.isValid(email) else { throw ServiceError.invalidEmail() }
        return email
    }

    /// `{email, code}` bodies. A code is any string; a wrong one is a wrong guess.
    private func emailAndCode(_ body: inout BodyReader) throws -> (String, String) {
        let code = body.requiredString("code")
        let address = try email(&body)
        guard let code else { throw ServiceError.validationFailed([]) }
        return (address, String(code.prefix(32)))
    }

    func sendEmailCode(_ context: RouteContext) throws -> RouteResult {
        let app = try context.requireApp()
        var body = try BodyReader(context)
        let command = TokenV1.SendEmailCode(appId: app.id, email: try email(&body))
        return commands.send(command, expecting: TokenV1.Accepted.self, appId: app.id, request: context.request,
                             render: Self.accepted)
    }

    func verifyEmailCode(_ context: RouteContext) throws -> RouteResult {
        let app = try context.requireApp()
        var body = try BodyReader(context)
        let (firstName, lastName) = body.optionalNames()
        let (address, code) = try emailAndCode(&body)
        let command = TokenV1.VerifyEmailCode(appId: app.id, email: address, code: code, firstName: firstName,
                                              lastName: lastName, client: context.clientInfo,
                                              guestUid: try auth.upgradingGuest(context))
        return commands.send(command, expecting: TokenV1.AuthResult.self, appId: app.id, request: context.request) {
            UserJSON.signIn($0)
        }
    }

    func forgotPassword(_ context: RouteContext) throws -> RouteResult {
        let app = try context.requireApp()
        var body = try BodyReader(context)
        let command = TokenV1.ForgotPassword(appId: app.id, email: try email(&body))
        return commands.send(command, expecting: TokenV1.Accepted.self, appId: app.id, request: context.request,
                             render: Self.accepted)
    }

    func checkPasswordCode(_ context: RouteContext) throws -> RouteResult {
        let app = try context.requireApp()
        var body = try BodyReader(context)
        let (address, code) = try emailAndCode(&body)
        let command = TokenV1.CheckPasswordCode(appId: app.id, email: address, code: code)
        return commands.send(command, expecting: TokenV1.CodeCheck.self, appId: app.id, request: context.request) {
            HTTPResponse.data(.object(["valid": .bool($0.valid)]))
        }
    }

    func resetPassword(_ context: RouteContext) throws -> RouteResult {
        let app = try context.requireApp()
        var body = try BodyReader(context)
        let password = body.requiredString("password")
        let (address, code) = try emailAndCode(&body)
        guard let password else { throw ServiceError.validationFailed([]) }
        if let problem = PasswordPolicy.problem(with: password) { throw ServiceError.weakPassword(problem) }
        let command = TokenV1.ResetPassword(appId: app.id, email: address, code: code, password: password)
        return commands.send(command, expecting: TokenV1.Done.self, appId: app.id, request: context.request) { _ in .noContent }
    }

    func changePassword(_ context: RouteContext) throws -> RouteResult {
        let claims = try context.requireCaller()
        var body = try BodyReader(context)
        let current = body.requiredString("current_password")
        let new = body.requiredString("new_password")
        try body.finish()
        guard let current, let new else { throw ServiceError.validationFailed([]) }
        if let problem = PasswordPolicy.problem(with: new) {
            throw ServiceError(code: "auth/weak-password", status: 422, detail: "The password is too weak.",
                               errors: [.init(location: "body.new_password", message: problem)])
        }
        let command = TokenV1.ChangePassword(appId: claims.aud, uid: claims.sub, sessionId: claims.sid,
                                             currentPassword: current, newPassword: new)
        return commands.send(command, expecting: TokenV1.Done.self, appId: claims.aud, request: context.request) { _ in
            .noContent
        }
    }

    func sendEmailVerification(_ context: RouteContext) throws -> RouteResult {
        let claims = try context.requireCaller()
        let command = TokenV1.SendEmailVerification(appId: claims.aud, uid: claims.sub)
        return commands.send(command, expecting: TokenV1.Accepted.self, appId: claims.aud, request: context.request,
                             render: Self.accepted)
    }

    func verifyEmail(_ context: RouteContext) throws -> RouteResult {
        let app = try context.requireApp()
        var body = try BodyReader(context)
        let (address, code) = try emailAndCode(&body)
        var command = TokenV1.VerifyEmail(appId: app.id, email: address, code: code)
        // Signed in (optional): the proof is made in that session (PRODUCT.md, "Email
        // ownership"; EmailOwnership.provedInSession). A token that does not verify is a 401,
        // so a client bug never turns an in-session proof into an anonymous one.
        if context.request.header("authorization") != nil {
            let claims = try auth.liveSession(context)
            guard claims.aud == app.id else { throw ServiceError.invalidToken }
            command.uid = claims.sub
            command.sessionId = claims.sid
        }
        return commands.send(command, expecting: TokenV1.UserResult.self, appId: app.id, request: context.request) {
            HTTPResponse.data($0.user.map(UserJSON.make) ?? .null)
        }
    }

}
