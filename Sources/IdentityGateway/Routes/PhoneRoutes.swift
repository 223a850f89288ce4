import IdentityKit

/// Phone sign-in and phone linking (PRODUCT.md, "Phone code"). Numbers are normalised to
/// E.164 here (422 `auth/invalid-phone-number` when they cannot be); the SMS policy (allowed
/// calling codes, caps, breaker) is the token worker's, and its refusals answer like sends.
struct PhoneRoutes: PhoneApiHandlers {
    let auth: Authenticator
    let commands: CommandSender


    private static func sent(_ reply: TokenV1.PhoneCodeSent) -> HTTPResponse {
        .data(.object(["session_id": .string(reply.sessionId), "expires_in": JSONValue(Int(reply.expiresIn))]), status: 202)
    }

    /// `{phone, country_code?}`: the number in E.164, or 422.
    private func phone(_ body: inout BodyReader) throws -> String {
        let phone = body.requiredString("phone")
        let country = body.optionalString("country_code", maxLength: 4).string
        try body.finish()
        guard let phone else { throw ServiceError.validationFailed([]) }
        guard let normalized = PhoneNumber.normalize(phone, country: country) else {
            throw ServiceError.invalidPhoneNumber()
        }
        return normalized
    }

    /// `{session_id, code}`. A code is any string; a wrong one is a wrong guess.
    private func sessionAndCode(_ body: inout BodyReader) throws -> (String, String) {
        let session = body.requiredString("session_id")
        let code = body.requiredString("code")
        try body.finish()
        guard let session, let code else { throw ServiceError.validationFailed([]) }
        return (String(session.prefix(128)), String(code.prefix(32)))
    }

    func sendPhoneCode(_ context: RouteContext) throws -> RouteResult {
        let app = try context.requireApp()
        var body = try BodyReader(context)
        let command = TokenV1.SendPhoneCode(appId: app.id, phone: try phone(&body), client: context.clientInfo)
        return commands.send(command, expecting: TokenV1.PhoneCodeSent.self, appId: app.id, request: context.request,
                             render: Self.sent)
    }

    func verifyPhoneCode(_ context: RouteContext) throws -> RouteResult {
        let app = try context.requireApp()
        var body = try BodyReader(context)
        let (firstName, lastName) = body.optionalNames()
        let (session, code) = try sessionAndCode(&body)
        let command = TokenV1.VerifyPhoneCode(appId: app.id, phoneSessionId: session, code: code, firstName: firstName,
                                              lastName: lastName, client: context.clientInfo,
                                              guestUid: try auth.upgradingGuest(context))
        return commands.send(command, expecting: TokenV1.AuthResult.self, appId: app.id, request: context.request) {
            UserJSON.signIn($0)
        }
    }

    func linkPhone(_ context: RouteContext) throws -> RouteResult {
        let claims = try context.requireCaller()
        var body = try BodyReader(context)
        let command = TokenV1.SendPhoneCode(appId: claims.aud, phone: try phone(&body), client: context.clientInfo,
                                            uid: claims.sub, sessionId: claims.sid)
        return commands.send(command, expecting: TokenV1.PhoneCodeSent.self, appId: claims.aud, request: context.request,
                             render: Self.sent)
    }

    func verifyLinkedPhone(_ context: RouteContext) throws -> RouteResult {
        let claims = try context.requireCaller()
        var body = try BodyReader(context)
        let (session, code) = try sessionAndCode(&body)
        let command = TokenV1.LinkPhone(appId: claims.aud, uid: claims.sub, sessionId: claims.sid,
                                        phoneSessionId: session, code: code)
        return commands.send(command, expecting: TokenV1.UserResult.self, appId: claims.aud, request: context.request) {
            HTTPResponse.data($0.user.map(UserJSON.make) ?? .null)
        }
    }
}
