import IdentityKit

/// MFA (PRODUCT.md, "MFA"): enrolment, status, backup codes and switching off for the signed-in
/// user, and the second step of a sign-in that answered 202. The gateway reads nothing of it
/// (its database role may not read TOTP secrets or backup code hashes): every call is a
/// command to the token worker, which also checks step-up.
struct MfaRoutes: MfaApiHandlers {
    let auth: Authenticator
    let commands: CommandSender



    private static func backupCodes(_ reply: TokenV1.BackupCodes) -> HTTPResponse {
        .data(.object(["backup_codes": JSONValue(reply.backupCodes)]))
    }

    /// `{code}` bodies. A code is any short string; a wrong one is a wrong guess.
    private func code(_ context: RouteContext) throws -> String {
        var body = try BodyReader(context)
        let code = body.requiredString("code")
        try body.finish()
        guard let code else { throw ServiceError.validationFailed([]) }
        return String(code.prefix(64))
    }

    // The declared operations that share a handler, each with its own route.
    func startTotp(_ context: RouteContext) throws -> RouteResult { try start(context, method: "totp") }
    func startEmailMfa(_ context: RouteContext) throws -> RouteResult { try start(context, method: "email") }
    func startSmsMfa(_ context: RouteContext) throws -> RouteResult { try start(context, method: "sms") }
    func confirmTotp(_ context: RouteContext) throws -> RouteResult { try confirm(context, method: "totp") }
    func confirmEmailMfa(_ context: RouteContext) throws -> RouteResult { try confirm(context, method: "email") }
    func confirmSmsMfa(_ context: RouteContext) throws -> RouteResult { try confirm(context, method: "sms") }

    func verifyMfa(_ context: RouteContext) throws -> RouteResult {
        let app = try context.requireApp()
        var body = try BodyReader(context)
        let token = body.requiredString("challenge_token")
        let code = body.requiredString("code")
        let method = body.optionalString("method", maxLength: 16).string
        try body.finish()
        guard let token, let code else { throw ServiceError.validationFailed([]) }
        if let method, !["totp", "email", "sms", "backup_code"].contains(method) {
            throw ServiceError.validationFailed([.init(location: "body.method", message: "must be totp, email, sms or backup_code")])
        }
        let command = TokenV1.VerifyMfa(appId: app.id, challengeToken: String(token.prefix(256)),
                                        code: String(code.prefix(64)), method: method, client: context.clientInfo)
        return commands.send(command, expecting: TokenV1.AuthResult.self, appId: app.id, request: context.request) {
            UserJSON.signIn($0)
        }
    }

    func mfaStatus(_ context: RouteContext) throws -> RouteResult {
        let claims = try context.requireCaller()
        let command = TokenV1.GetMfaStatus(appId: claims.aud, uid: claims.sub)
        return commands.send(command, expecting: TokenV1.MfaStatus.self, appId: claims.aud, request: context.request) {
            .data(.object(["enabled": .bool($0.enabled), "methods": JSONValue($0.methods),
                           "backup_codes_remaining": JSONValue(Int($0.backupCodesRemaining)),
                           "last_used_at": JSONValue($0.lastUsedAt), "enabled_at": JSONValue($0.enabledAt)]))
        }
    }

    func start(_ context: RouteContext, method: String) throws -> RouteResult {
        let claims = try context.requireCaller()
        let command = TokenV1.StartMfaEnrolment(appId: claims.aud, uid: claims.sub, sessionId: claims.sid, method: method,
                                                client: context.clientInfo)
        if method == "totp" {
            return commands.send(command, expecting: TokenV1.TotpEnrolment.self, appId: claims.aud, request: context.request) {
                .data(.object(["secret": .string($0.secret), "otpauth_uri": .string($0.otpauthUri),
                               "qr_svg": .string($0.qrSvg)]))
            }
        }
        return commands.send(command, expecting: TokenV1.Accepted.self, appId: claims.aud, request: context.request) {
            .data(.object(["expires_in": JSONValue(Int($0.expiresIn))]), status: 202)
        }
    }

    func confirm(_ context: RouteContext, method: String) throws -> RouteResult {
        let claims = try context.requireCaller()
        let code = try code(context)
        let command = TokenV1.ConfirmMfaEnrolment(appId: claims.aud, uid: claims.sub, sessionId: claims.sid,
                                                  method: method, code: code)
        return commands.send(command, expecting: TokenV1.BackupCodes.self, appId: claims.aud, request: context.request,
                             render: Self.backupCodes)
    }

    func regenerateBackupCodes(_ context: RouteContext) throws -> RouteResult {
        let claims = try context.requireCaller()
        let command = TokenV1.RegenerateBackupCodes(appId: claims.aud, uid: claims.sub, sessionId: claims.sid)
        return commands.send(command, expecting: TokenV1.BackupCodes.self, appId: claims.aud, request: context.request,
                             render: Self.backupCodes)
    }

    func disableMfa(_ context: RouteContext) throws -> RouteResult {
        let claims = try context.requireCaller()
        let code = try code(context)
        let command = TokenV1.DisableMfa(appId: claims.aud, uid: claims.sub, sessionId: claims.sid, code: code)
        return commands.send(command, expecting: TokenV1.Done.self, appId: claims.aud, request: context.request) { _ in
            .noContent
        }
    }
}
