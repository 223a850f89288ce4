import IdentityKit

/// How a worker's reply becomes the HTTP answer of an operation whose handler is generated
/// (gateway.proto, `http.answer`): named there, rendered here once for every such operation.
enum DeclaredAnswer {
    /// "user": the user object, as `GET /v1/me` answers it.
    static func user(_ reply: TokenV1.UserResult) -> HTTPResponse {
        HTTPResponse.data(reply.user.map(UserJSON.make) ?? .null)
    }

    /// "accepted": 202 `{expires_in}`, the lifetime of what was sent (a code).
    static func accepted(_ reply: TokenV1.Accepted) -> HTTPResponse {
        .data(.object(["expires_in": JSONValue(Int(reply.expiresIn))]), status: 202)
    }

    /// "signed_in": the tokens and user of a sign-in at the operation's status, or 202 with the
    /// MFA challenge when a second factor is due.
    static func signedIn(status: Int) -> @Sendable (TokenV1.AuthResult) -> HTTPResponse {
        { UserJSON.signIn($0, status: status) }
    }

    /// "code_check": `{valid}`, whether a code would be accepted (nothing spent).
    static func codeCheck(_ reply: TokenV1.CodeCheck) -> HTTPResponse {
        .data(.object(["valid": .bool(reply.valid)]))
    }

    /// "backup_codes": `{backup_codes}`, shown this once.
    static func backupCodes(_ reply: TokenV1.BackupCodes) -> HTTPResponse {
        .data(.object(["backup_codes": JSONValue(reply.backupCodes)]))
    }

    /// "totp_enrolment": the new secret, its otpauth URI and the QR code as SVG.
    static func totpEnrolment(_ reply: TokenV1.TotpEnrolment) -> HTTPResponse {
        .data(.object(["secret": .string(reply.secret), "otpauth_uri": .string(reply.otpauthUri),
                       "qr_svg": .string(reply.qrSvg)]))
    }

    /// "mfa_status": whether MFA is on, its methods, backup codes left and when it was used.
    static func mfaStatus(_ reply: TokenV1.MfaStatus) -> HTTPResponse {
        .data(.object(["enabled": .bool(reply.enabled), "methods": JSONValue(reply.methods),
                       "backup_codes_remaining": JSONValue(Int(reply.backupCodesRemaining)),
                       "last_used_at": JSONValue(reply.lastUsedAt), "enabled_at": JSONValue(reply.enabledAt)]))
    }

    /// "tokens": a refresh's new token pair (a refresh never asks for a second factor).
    static func tokens(_ reply: TokenV1.AuthResult) -> HTTPResponse {
        .data(UserJSON.tokens(reply))
    }

    /// "phone_code_sent": 202 `{session_id, expires_in}`, the same whether or not the SMS left.
    static func phoneCodeSent(_ reply: TokenV1.PhoneCodeSent) -> HTTPResponse {
        .data(.object(["session_id": .string(reply.sessionId), "expires_in": JSONValue(Int(reply.expiresIn))]), status: 202)
    }

    /// "device": the registered push device.
    static func device(status: Int) -> @Sendable (TokenV1.DeviceResult) -> HTTPResponse {
        { .data($0.device.map(AnswerJSON.device) ?? .null, status: status) }
    }

    /// "passkey": one passkey of the user.
    static func passkey(status: Int) -> @Sendable (TokenV1.PasskeyResult) -> HTTPResponse {
        { .data($0.passkey.map(AnswerJSON.passkey) ?? .null, status: status) }
    }

    /// "passkey_list": the user's passkeys.
    static func passkeyList(_ reply: TokenV1.PasskeyList) -> HTTPResponse {
        .data(.array(reply.passkeys.map(AnswerJSON.passkey)))
    }

    /// "passkey_sign_in_options": the ceremony's flow, its request options, and whether the
    /// identifier (if any) has passkeys.
    static func passkeySignInOptions(_ reply: TokenV1.PasskeyOptions) -> HTTPResponse {
        .data(.object(["flow_id": .string(reply.flowId), "options": AnswerJSON.passkeyOptions(reply),
                       "has_passkeys": .bool(reply.hasPasskeys)]))
    }

    /// "passkey_options": a registration's creation options.
    static func passkeyOptions(_ reply: TokenV1.PasskeyOptions) -> HTTPResponse {
        .data(AnswerJSON.passkeyOptions(reply))
    }

    /// "done": 204.
    static func done(_ reply: TokenV1.Done) -> HTTPResponse { .noContent }
}
