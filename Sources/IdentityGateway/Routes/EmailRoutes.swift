import IdentityKit

/// Email codes, password recovery and change, email verification and change (PRODUCT.md, "Email
/// code" and "Account"). Answers never wait for SMTP: the mail is queued for the mailer worker.
/// Every handler but `verifyEmail` is generated from its declaration (gateway.proto); that one
/// takes an optional access token, which makes it a proof in that session.
struct EmailRoutes: EmailApiHandlers {
    let auth: Authenticator
    let commands: CommandSender

    /// `{email, code}` bodies. A code is any string; a wrong one is a wrong guess.
    private func emailAndCode(_ body: inout BodyReader) throws -> (String, String) {
        let code = body.requiredString("code")
        let email = body.requiredString("email")
        try body.finish()
        guard let code, let email else { throw ServiceError.validationFailed([]) }
        guard EmailAddress.isValid(email) else { throw ServiceError.invalidEmail() }
        return (email, String(code.prefix(32)))
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
        return commands.send(command, expecting: TokenV1.UserResult.self, appId: app.id, request: context.request,
                             render: DeclaredAnswer.user)
    }
}
