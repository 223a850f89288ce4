import IdentityKit

/// MFA (PRODUCT.md, "MFA"): enrolment, status, backup codes and switching off for the signed-in
/// user, and the second step of a sign-in that answered 202. The gateway reads nothing of it
/// (its database role may not read TOTP secrets or backup code hashes): every call is a
/// command to the token worker, which also checks step-up.
struct MfaRoutes: Sendable {
    let auth: Authenticator
    let commands: CommandSender

    /// A code checked by the token worker: wrong, the challenge dead or expired, the user's
    /// budget of wrong codes spent (429).
    static let secondFactorCheck: [ServiceError] = [.validationFailed([]), .invalidCode, .codeExpired,
                                                    .rateLimited(retryAfter: 1), .userDisabled]
    /// Changes of an account's factors (declared `proof: .freshSignIn`: a session signed in less
    /// than 5 minutes ago, at aal 2 once MFA is on) may also meet a disabled account.
    static let enrolment: [ServiceError] = [.userDisabled]

    var routes: [Route] {
        [Route(method: "POST", pattern: "/v1/auth/mfa/verify", needsApp: true, takesBody: true,
               limits: [.perIP(RateLimitCatalogue.mfaVerifyPerIP)], errors: Self.secondFactorCheck, handler: verify),
         Route(method: "GET", pattern: "/v1/me/mfa", needsApp: true, takesBody: false, errors: .signedIn, handler: status),
         Route(method: "DELETE", pattern: "/v1/me/mfa", needsApp: true, takesBody: true,
               errors: Self.enrolment + Self.secondFactorCheck, proof: .freshSignIn, handler: disable),
         Route(method: "POST", pattern: "/v1/me/mfa/totp", needsApp: true, takesBody: false,
               errors: Self.enrolment + [.mfaAlreadyEnabled, .validationFailed([])], proof: .freshSignIn, handler: { try start($0, method: "totp") }),
         Route(method: "POST", pattern: "/v1/me/mfa/email", needsApp: true, takesBody: false,
               errors: Self.enrolment + [.validationFailed([])], proof: .freshSignIn, handler: { try start($0, method: "email") }),
         // Texts a code to the verified phone: limited per IP like the phone code sends; the
         // token worker applies the SMS policy (calling codes, breaker, caps) besides.
         Route(method: "POST", pattern: "/v1/me/mfa/sms", needsApp: true, takesBody: false, limits: .codeSendPerIP,
               errors: Self.enrolment + [.validationFailed([])], proof: .freshSignIn, handler: { try start($0, method: "sms") }),
         Route(method: "POST", pattern: "/v1/me/mfa/totp/confirm", needsApp: true, takesBody: true,
               errors: Self.enrolment + Self.secondFactorCheck, proof: .freshSignIn, handler: { try confirm($0, method: "totp") }),
         Route(method: "POST", pattern: "/v1/me/mfa/email/confirm", needsApp: true, takesBody: true,
               errors: Self.enrolment + Self.secondFactorCheck, proof: .freshSignIn, handler: { try confirm($0, method: "email") }),
         Route(method: "POST", pattern: "/v1/me/mfa/sms/confirm", needsApp: true, takesBody: true,
               errors: Self.enrolment + Self.secondFactorCheck, proof: .freshSignIn, handler: { try confirm($0, method: "sms") }),
         Route(method: "POST", pattern: "/v1/me/mfa/backup-codes", needsApp: true, takesBody: false,
               errors: Self.enrolment + [.notFound], proof: .freshSignIn, handler: regenerate)]
    }

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

    func verify(_ context: RouteContext) throws -> RouteResult {
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

    func status(_ context: RouteContext) throws -> RouteResult {
        let claims = try auth.liveSession(context)
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

    func regenerate(_ context: RouteContext) throws -> RouteResult {
        let claims = try context.requireCaller()
        let command = TokenV1.RegenerateBackupCodes(appId: claims.aud, uid: claims.sub, sessionId: claims.sid)
        return commands.send(command, expecting: TokenV1.BackupCodes.self, appId: claims.aud, request: context.request,
                             render: Self.backupCodes)
    }

    func disable(_ context: RouteContext) throws -> RouteResult {
        let claims = try context.requireCaller()
        let code = try code(context)
        let command = TokenV1.DisableMfa(appId: claims.aud, uid: claims.sub, sessionId: claims.sid, code: code)
        return commands.send(command, expecting: TokenV1.Done.self, appId: claims.aud, request: context.request) { _ in
            .noContent
        }
    }
}
