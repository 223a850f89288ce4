import Foundation
import GraphQL
import IdentityBasics
import OperationAPI

/// Seed 003's schema: every query and mutation its clients call, with the guide's names.
/// Each resolver calls a declared operation through the typed API (`GraphQLCall`); none runs
/// a flow itself, and none names a path, a body key or a rule the declaration holds.
public enum IdentitySchema {
    public static let schema = Schema(query: query, mutation: mutation, types: types)

    /// Mutations that sign a user in: at most one per request (a document cannot be a
    /// credential-stuffing batch).
    public static let signInFields: Set<String> = ["register", "login", "loginWithApple", "loginWithIdToken", "loginWithFirebase",
                                                   "loginWithPhone", "verifyPasskeyAuthentication", "verifyLoginTwoFactor"]

    private static func s(_ name: String) -> TypeRef { .named(name) }
    private static func req(_ name: String) -> TypeRef { .nonNull(.named(name)) }
    private static func listOf(_ name: String) -> TypeRef { .nonNull(.list(.nonNull(.named(name)))) }

    private static func call(_ info: ResolveInfo) throws -> GraphQLCall {
        guard let call = info.context as? GraphQLCall else { throw GraphQLCall.internalError }
        return call
    }

    /// A string argument (or input field), nil when null or absent.
    private static func text(_ value: GraphQLValue?) -> String? { value?.string }

    /// A string the operation requires: its absence is the 422 the route's body reader answers.
    private static func required(_ value: GraphQLValue?, _ field: String) throws -> String {
        guard let text = value?.string else { throw GraphQLCall.graphQLError(.missing(field)) }
        return text
    }

    private static func input(_ info: ResolveInfo, _ name: String = "input") -> GraphQLValue { info.argument(name) }

    /// The address and code of a mailed link's `token` argument (`MailActionToken`: what seed
    /// 003's clients pass on alone), else the `email` argument and the token as the bare code.
    private static func mailed(_ info: ResolveInfo) -> (email: String?, code: String?) {
        if info.argument("email").isNull, let token = info.argument("token").string, let pair = MailActionToken.decode(token) {
            return (pair.email, pair.code)
        }
        return (info.argument("email").string, info.argument("token").string)
    }

    private static func success(_ message: String? = nil, _ extra: [(String, GraphQLValue)] = []) -> GraphQLValue {
        .object([("success", .bool(true)), ("message", message.map { .string($0) } ?? .null)] + extra)
    }

    private static func field(_ data: JSONValue, _ key: String, _ fallback: JSONValue = .null) -> GraphQLValue {
        GraphQLBridge.value(data[key] ?? fallback)
    }

    // MARK: types

    static let types: [NamedType] = [
        .scalar(ScalarType("JSON", kind: .json, description: "Any JSON value (WebAuthn options and responses).")),
        .object(ObjectType("User", fields: [
            Field("id", .nonNull(.named("ID"))), Field("username", s("String")), Field("email", s("String")),
            Field("isEmailVerified", req("Boolean")), Field("firstName", s("String")), Field("lastName", s("String")),
            Field("displayName", s("String")), Field("photoURL", s("String")), Field("isGuest", req("Boolean")),
            Field("hasPassword", req("Boolean")), Field("twoFactorEnabled", req("Boolean")), Field("createdAt", s("String")),
            Field("bio", s("String")), Field("dateOfBirth", s("String")), Field("gender", s("String")), Field("accountType", s("String")),
        ])),
        .object(ObjectType("AuthPayload", description: "A sign-in: the user and token, or requiresTwoFactor with a twoFactorToken for verifyLoginTwoFactor.", fields: [
            Field("user", s("User")), Field("token", s("String")),
            Field("refreshToken", s("String"), description: "Standard-profile apps only: token is then a short-lived access token."),
            Field("requiresTwoFactor", req("Boolean")), Field("twoFactorToken", s("String")), Field("twoFactorMethod", s("String")),
        ])),
        .object(ObjectType("SuccessResponse", fields: [Field("success", req("Boolean")), Field("message", s("String"))])),
        .object(ObjectType("ResetTokenValidation", fields: [Field("valid", req("Boolean")), Field("message", s("String"))])),
        .object(ObjectType("PhoneOtpResponse", fields: [Field("success", req("Boolean")), Field("sessionId", s("String")),
                                                        Field("expiresIn", s("Int"))])),
        .object(ObjectType("PasskeyOptions", fields: [Field("flowId", req("String")), Field("options", req("JSON")),
                                                      Field("hasPasskeys", req("Boolean"))])),
        .object(ObjectType("Passkey", fields: [Field("id", .nonNull(.named("ID"))), Field("name", s("String")),
                                               Field("createdAt", s("String")), Field("lastUsedAt", s("String")),
                                               Field("backedUp", req("Boolean"))])),
        .object(ObjectType("TwoFactorStatus", fields: [Field("isEnabled", req("Boolean")), Field("backupCodesCount", req("Int")),
                                                       Field("lastUsed", s("String")), Field("setupDate", s("String")),
                                                       Field("methods", listOf("String"))])),
        .object(ObjectType("TwoFactorSetupResponse", fields: [
            Field("success", req("Boolean")), Field("message", s("String")), Field("method", s("String")),
            Field("qrCode", s("String"), description: "The QR code as a data: URL (SVG)."), Field("qrCodeSvg", s("String")),
            Field("secret", s("String")), Field("otpauthUri", s("String")), Field("phoneNumber", s("String")), Field("email", s("String")),
            Field("codeLength", s("Int")), Field("expiresIn", s("Int")), Field("backupCodes", .list(.nonNull(.named("String")))),
        ])),
        .object(ObjectType("BackupCodesResponse", fields: [Field("success", req("Boolean")), Field("message", s("String")),
                                                           Field("backupCodes", .list(.nonNull(.named("String"))))])),
        .object(ObjectType("DeviceToken", fields: [Field("id", .nonNull(.named("ID"))), Field("token", req("String")),
                                                   Field("platform", req("String")), Field("tokenType", req("String")),
                                                   Field("deviceName", s("String")), Field("isActive", req("Boolean")),
                                                   Field("createdAt", s("String"))])),
        .inputObject(InputObjectType("UserRegistrationInput", fields: [
            InputValue("username", req("String")), InputValue("email", req("String")), InputValue("password", req("String")),
            InputValue("bio", s("String")), InputValue("dateOfBirth", s("String")), InputValue("gender", s("String")),
            InputValue("accountType", s("String")),
            InputValue("locale", s("String"), description: "The user's language (BCP 47, e.g. pt-BR): mail and SMS to them are written in it."),
        ])),
        .inputObject(InputObjectType("UserLoginInput", fields: [
            InputValue("identifier", req("String"), description: "An email address or a username."), InputValue("password", req("String")),
        ])),
        .inputObject(InputObjectType("PhoneLoginInput", fields: [
            InputValue("sessionId", req("String")), InputValue("code", req("String")), InputValue("phone", s("String")),
            InputValue("countryCode", s("String")),
        ])),
        .inputObject(InputObjectType("ChangePasswordInput", fields: [InputValue("currentPassword", req("String")),
                                                                     InputValue("newPassword", req("String"))])),
        .inputObject(InputObjectType("EnableTwoFactorInput", fields: [InputValue("method", req("String"), description: "authenticator, sms or email"),
                                                                      InputValue("phoneNumber", s("String"),
                                                                                 description: "not used: an SMS code goes to the account's verified phone")])),
        .inputObject(InputObjectType("TwoFactorSetupInput", fields: [InputValue("code", req("String")),
                                                                     InputValue("method", s("String"), description: "authenticator (default), sms or email")])),
        .inputObject(InputObjectType("TwoFactorVerifyInput", fields: [InputValue("code", req("String"))])),
        .inputObject(InputObjectType("RegisterDeviceTokenInput", fields: [
            InputValue("token", req("String")), InputValue("platform", req("String"), description: "ios, android or web"),
            InputValue("deviceName", s("String")),
            InputValue("tokenType", s("String"), description: "fcm (default), apns or voip"),
        ])),
    ]

    // MARK: queries

    static let query = ObjectType("Query", fields: [
        Field("me", s("User")) { info in
            GraphQLBridge.user(try await call(info).data { try await $0.getMe(as: $1) })
        },
        Field("isEmailVerified", req("Boolean")) { info in
            field(try await call(info).data { try await $0.getMe(as: $1) }, "email_verified", .bool(false))
        },
        Field("verifyResetToken", req("ResetTokenValidation"), arguments: [
            InputValue("token", req("String"), description: "The link's token (or the code from the reset mail, with email)."),
            InputValue("email", s("String"), description: "The account's address, when token is the bare code."),
        ]) { info in
            let (email, code) = mailed(info)
            let input = CheckPasswordCodeInput(email: try required(.from(email), "email"), code: try required(.from(code), "code"))
            let data = try await call(info).data { try await $0.checkPasswordCode(input, as: $1) }
            let valid = data["valid"] == .bool(true)
            return .object([("valid", .bool(valid)), ("message", .string(valid ? "The code is valid." : "The code is invalid or expired."))])
        },
        Field("twoFactorStatus", req("TwoFactorStatus")) { info in
            let data = try await call(info).data { try await $0.mfaStatus(as: $1) }
            return .object([("isEnabled", field(data, "enabled", .bool(false))),
                            ("backupCodesCount", field(data, "backup_codes_remaining", .number(0))),
                            ("lastUsed", field(data, "last_used_at")), ("setupDate", field(data, "enabled_at")),
                            ("methods", field(data, "methods", .array([])))])
        },
        Field("myPasskeys", listOf("Passkey")) { info in
            guard case .array(let items) = try await call(info).data({ try await $0.listPasskeys(as: $1) }) else { return .list([]) }
            return .list(items.map(passkey))
        },
        Field("getUserDeviceTokens", listOf("DeviceToken")) { info in
            guard case .array(let items) = try await call(info).data({ try await $0.listDevices(as: $1) }) else { return .list([]) }
            return .list(items.map(device))
        },
    ])

    private static func passkey(_ item: JSONValue) -> GraphQLValue {
        .object([("id", field(item, "id")), ("name", field(item, "name")), ("createdAt", field(item, "created_at")),
                 ("lastUsedAt", field(item, "last_used_at")), ("backedUp", field(item, "backup_state", .bool(false)))])
    }

    private static func device(_ item: JSONValue) -> GraphQLValue {
        .object([("id", field(item, "id")), ("token", field(item, "token")), ("platform", field(item, "platform")),
                 ("tokenType", field(item, "kind")), ("deviceName", field(item, "device_name")), ("isActive", .bool(true)),
                 ("createdAt", field(item, "created_at"))])
    }

    // MARK: mutations

    static let mutation = ObjectType("Mutation", fields: [
        Field("register", req("AuthPayload"), arguments: [InputValue("input", req("UserRegistrationInput"))]) { info in
            let input = input(info)
            // bio, dateOfBirth, gender, accountType: the core has no columns for them; they go
            // into the new user's user_metadata (updateMe, as the user could do it).
            let signUp = SignUpInput(email: try required(input["email"], "email"), password: try required(input["password"], "password"),
                                     username: text(input["username"]), locale: text(input["locale"]))
            return try await call(info).signIn(userMetadata: profileMetadata(input).map(GraphQLBridge.json)) {
                try await $0.signUp(signUp, as: $1)
            }
        },
        Field("login", req("AuthPayload"), arguments: [InputValue("input", req("UserLoginInput"))]) { info in
            let input = input(info)
            let signIn = SignInInput(identifier: text(input["identifier"]), password: try required(input["password"], "password"))
            return try await call(info).signIn { try await $0.signIn(signIn, as: $1) }
        },
        Field("loginWithApple", req("AuthPayload"), arguments: [
            InputValue("identityToken", req("String")), InputValue("authorizationCode", req("String")),
            InputValue("email", s("String")), InputValue("firstName", s("String")), InputValue("lastName", s("String")),
            InputValue("nonce", s("String"), description: "The nonce the identity token was requested with (GET /v1/auth/nonce, or the client's own for apps with apple_nonce=client); apps with apple_nonce=none accept none."),
        ]) { info in
            // The guide's clients send no nonce: "" then, which only an app with `apple_nonce`
            // `none` accepts (the token itself is then single use); any other app refuses it.
            let apple = SignInWithAppleInput(identityToken: try required(info.argument("identityToken"), "identity_token"),
                                             nonce: text(info.argument("nonce")) ?? "",
                                             authorizationCode: text(info.argument("authorizationCode")),
                                             firstName: text(info.argument("firstName")), lastName: text(info.argument("lastName")))
            return try await call(info).signIn { try await $0.signInWithApple(apple, as: $1) }
        },
        Field("loginWithIdToken", req("AuthPayload"), arguments: idTokenArguments, resolve: idTokenSignIn),
        Field("loginWithFirebase", req("AuthPayload"), arguments: idTokenArguments,
              deprecationReason: "Use loginWithIdToken.", resolve: idTokenSignIn),
        // Phone sign-in: sendPhoneCode and verifyPhoneCode. A refused number (a calling code the
        // app does not allow, a cap) answers like a sent code there, so here too.
        Field("requestPhoneOtp", req("PhoneOtpResponse"), arguments: [InputValue("phone", req("String")), InputValue("countryCode", s("String"))]) { info in
            let send = SendPhoneCodeInput(phone: try required(info.argument("phone"), "phone"), countryCode: text(info.argument("countryCode")))
            let data = try await call(info).data { try await $0.sendPhoneCode(send, as: $1) }
            return .object([("success", .bool(true)), ("sessionId", field(data, "session_id")), ("expiresIn", field(data, "expires_in"))])
        },
        Field("loginWithPhone", req("AuthPayload"), arguments: [InputValue("input", req("PhoneLoginInput"))]) { info in
            let input = input(info)
            let verify = VerifyPhoneCodeInput(sessionId: try required(input["sessionId"], "session_id"), code: try required(input["code"], "code"))
            return try await call(info).signIn { try await $0.verifyPhoneCode(verify, as: $1) }
        },
        Field("generatePasskeyAuthenticationOptions", req("PasskeyOptions"), arguments: [InputValue("identifier", s("String"))]) { info in
            let options = PasskeySignInOptionsInput(identifier: text(info.argument("identifier")))
            let data = try await call(info).data { try await $0.passkeySignInOptions(options, as: $1) }
            return .object([("flowId", field(data, "flow_id")), ("options", field(data, "options")),
                            ("hasPasskeys", field(data, "has_passkeys", .bool(false)))])
        },
        Field("verifyPasskeyAuthentication", req("AuthPayload"), arguments: [InputValue("flowId", req("String")), InputValue("response", req("JSON"))]) { info in
            let verify = PasskeySignInVerifyInput(flowId: try required(info.argument("flowId"), "flow_id"),
                                                  response: GraphQLBridge.json(info.argument("response")))
            return try await call(info).signIn { try await $0.passkeySignInVerify(verify, as: $1) }
        },
        Field("generatePasskeyRegistrationOptions", req("PasskeyOptions")) { info in
            let data = try await call(info).data { try await $0.passkeyRegistrationOptions(as: $1) }
            return .object([("flowId", field(data, "flow_id")), ("options", field(data, "options")), ("hasPasskeys", .bool(true))])
        },
        Field("verifyPasskeyRegistration", req("Passkey"), arguments: [InputValue("flowId", req("String")), InputValue("response", req("JSON")),
                                                                        InputValue("name", s("String"))]) { info in
            // The flow is the one the response's challenge names: flowId is not sent on.
            let register = RegisterPasskeyInput(response: GraphQLBridge.json(info.argument("response")), name: text(info.argument("name")))
            return passkey(try await call(info).data { try await $0.registerPasskey(register, as: $1) })
        },
        Field("deletePasskey", req("Boolean"), arguments: [InputValue("id", .nonNull(.named("ID")))]) { info in
            let id = try required(info.argument("id"), "id")
            _ = try await call(info).data { try await $0.deletePasskey(id: id, as: $1) }
            return .bool(true)
        },
        Field("setupTwoFactor", req("TwoFactorSetupResponse")) { info in try await totpSetup(info) },
        Field("enableTwoFactor", req("TwoFactorSetupResponse"), arguments: [InputValue("input", req("EnableTwoFactorInput"))]) { info in
            switch input(info)["method"]?.string ?? "" {
            case "authenticator", "totp":
                return try await totpSetup(info)
            case "email":
                let data = try await call(info).data { try await $0.startEmailMfa(as: $1) }
                return success("A code was sent to your email address.", [("method", .string("email")), ("codeLength", .int(6)),
                                                                           ("expiresIn", field(data, "expires_in"))])
            case "sms":
                // The code goes to the account's verified phone (linked first with linkPhone);
                // a `phoneNumber` given here does not choose where it goes.
                let data = try await call(info).data { try await $0.startSmsMfa(as: $1) }
                return success("A code was sent to your phone.", [("method", .string("sms")), ("codeLength", .int(6)),
                                                                  ("expiresIn", field(data, "expires_in"))])
            default:
                throw GraphQLError("method must be authenticator, sms or email.", code: "auth/validation-failed",
                                   extensions: [("status", .int(422))])
            }
        },
        Field("verifyTwoFactorSetup", req("BackupCodesResponse"), arguments: [InputValue("input", req("TwoFactorSetupInput"))]) { info in
            let code = try required(input(info)["code"], "code")
            let data: JSONValue
            switch input(info)["method"]?.string ?? "" {
            case "email": data = try await call(info).data { try await $0.confirmEmailMfa(ConfirmEmailMfaInput(code: code), as: $1) }
            case "sms": data = try await call(info).data { try await $0.confirmSmsMfa(ConfirmSmsMfaInput(code: code), as: $1) }
            default: data = try await call(info).data { try await $0.confirmTotp(ConfirmTotpInput(code: code), as: $1) }
            }
            return success("Two-factor authentication is on.", [("backupCodes", field(data, "backup_codes"))])
        },
        Field("disableTwoFactor", req("SuccessResponse"), arguments: [InputValue("input", req("TwoFactorVerifyInput"))]) { info in
            let disable = DisableMfaInput(code: try required(input(info)["code"], "code"))
            _ = try await call(info).data { try await $0.disableMfa(disable, as: $1) }
            return success("Two-factor authentication is off.")
        },
        Field("regenerateBackupCodes", req("BackupCodesResponse")) { info in
            let data = try await call(info).data { try await $0.regenerateBackupCodes(as: $1) }
            return success(nil, [("backupCodes", field(data, "backup_codes"))])
        },
        Field("verifyLoginTwoFactor", req("AuthPayload"), arguments: [InputValue("twoFactorToken", req("String")), InputValue("code", req("String"))]) { info in
            let verify = VerifyMfaInput(challengeToken: try required(info.argument("twoFactorToken"), "challenge_token"),
                                        code: try required(info.argument("code"), "code"))
            return try await call(info).signIn { try await $0.verifyMfa(verify, as: $1) }
        },
        Field("requestPasswordReset", req("SuccessResponse"), arguments: [InputValue("email", req("String"))]) { info in
            let forgot = ForgotPasswordInput(email: try required(info.argument("email"), "email"))
            _ = try await call(info).data { try await $0.forgotPassword(forgot, as: $1) }
            return success("If an account uses this address, a reset code was sent to it.")
        },
        Field("resetPassword", req("SuccessResponse"), arguments: [
            InputValue("token", req("String"), description: "The link's token (or the code from the reset mail, with email)."),
            InputValue("newPassword", req("String")),
            InputValue("email", s("String"), description: "The account's address, when token is the bare code."),
        ]) { info in
            let (email, code) = mailed(info)
            let reset = ResetPasswordInput(email: try required(.from(email), "email"), code: try required(.from(code), "code"),
                                           password: try required(info.argument("newPassword"), "password"))
            _ = try await call(info).data { try await $0.resetPassword(reset, as: $1) }
            return success("The password was changed.")
        },
        Field("changePassword", req("SuccessResponse"), arguments: [InputValue("input", req("ChangePasswordInput"))]) { info in
            let change = ChangePasswordInput(currentPassword: try required(input(info)["currentPassword"], "current_password"),
                                             newPassword: try required(input(info)["newPassword"], "new_password"))
            _ = try await call(info).data { try await $0.changePassword(change, as: $1) }
            return success("The password was changed.")
        },
        Field("sendEmailVerification", req("SuccessResponse"), resolve: sendVerification),
        Field("resendEmailVerification", req("SuccessResponse"), resolve: sendVerification),
        Field("verifyEmail", req("SuccessResponse"), arguments: [
            InputValue("token", req("String"), description: "The link's token (or the code from the verification mail)."),
            InputValue("email", s("String"), description: "The address verified; from the link's token, else the signed-in user's."),
        ]) { info in
            let call = try call(info)
            var (email, code) = mailed(info)
            if email == nil, call.caller.bearer != nil {
                email = try await call.data { try await $0.getMe(as: $1) }["email"]?.string
            }
            let verify = VerifyEmailInput(email: try required(.from(email), "email"), code: try required(.from(code), "code"))
            _ = try await call.data { try await $0.verifyEmail(verify, as: $1) }
            return success("The email address is verified.")
        },
        // The signed-in user's new address: startEmailChange (a fresh sign-in, else
        // auth/reauth-required), then confirmEmailChange with the code mailed to the new address.
        Field("startEmailChange", req("SuccessResponse"), arguments: [
            InputValue("email", req("String"), description: "The new address; the code is mailed to it."),
        ]) { info in
            let start = StartEmailChangeInput(email: try required(info.argument("email"), "email"))
            _ = try await call(info).data { try await $0.startEmailChange(start, as: $1) }
            return success("A code was sent to the new address.")
        },
        Field("confirmEmailChange", req("User"), arguments: [
            InputValue("code", req("String"), description: "The code mailed to the new address."),
        ]) { info in
            let confirm = ConfirmEmailChangeInput(code: try required(info.argument("code"), "code"))
            return GraphQLBridge.user(try await call(info).data { try await $0.confirmEmailChange(confirm, as: $1) })
        },
        Field("registerDeviceToken", req("DeviceToken"), arguments: [InputValue("input", req("RegisterDeviceTokenInput"))]) { info in
            let input = input(info)
            let register = RegisterDeviceInput(token: try required(input["token"], "token"), platform: try required(input["platform"], "platform"),
                                               kind: text(input["tokenType"]) ?? "fcm", deviceName: text(input["deviceName"]))
            return device(try await call(info).data { try await $0.registerDevice(register, as: $1) })
        },
        Field("deleteDeviceToken", req("Boolean"), arguments: [InputValue("tokenId", .nonNull(.named("ID")))]) { info in
            let id = try required(info.argument("tokenId"), "id")
            _ = try await call(info).data { try await $0.unregisterDevice(id: id, as: $1) }
            return .bool(true)
        },
    ])

    private static let idTokenArguments = [InputValue("idToken", req("String")), InputValue("email", s("String")),
                                           InputValue("displayName", s("String")), InputValue("photoURL", s("String"))]

    /// `loginWithIdToken` and its deprecated alias: a Firebase id token (Google or phone
    /// behind it), as signInWithIdToken.
    @Sendable private static func idTokenSignIn(_ info: ResolveInfo) async throws -> GraphQLValue {
        var names: [String] = []
        if let display = text(info.argument("displayName")) { names = display.split(separator: " ", maxSplits: 1).map(String.init) }
        let signIn = SignInWithIdTokenInput(provider: "firebase", idToken: try required(info.argument("idToken"), "id_token"),
                                            firstName: names.first, lastName: names.count > 1 ? names[1] : nil)
        return try await call(info).signIn { try await $0.signInWithIdToken(signIn, as: $1) }
    }

    @Sendable private static func sendVerification(_ info: ResolveInfo) async throws -> GraphQLValue {
        _ = try await call(info).data { try await $0.sendEmailVerification(as: $1) }
        return success("A verification code was sent.")
    }

    private static func totpSetup(_ info: ResolveInfo) async throws -> GraphQLValue {
        let data = try await call(info).data { try await $0.startTotp(as: $1) }
        var qrCode: GraphQLValue = .null
        if case .string(let svg)? = data["qr_svg"] { qrCode = .string("data:image/svg+xml;base64," + Data(svg.utf8).base64EncodedString()) }
        return success(nil, [("method", .string("authenticator")), ("qrCode", qrCode), ("qrCodeSvg", field(data, "qr_svg")),
                             ("secret", field(data, "secret")), ("otpauthUri", field(data, "otpauth_uri")), ("codeLength", .int(6))])
    }

    /// The guide's profile fields, kept as user metadata (the core has no columns for them).
    private static func profileMetadata(_ input: GraphQLValue) -> GraphQLValue? {
        let pairs = ["bio", "dateOfBirth", "gender", "accountType"].compactMap { key -> (String, GraphQLValue)? in
            guard let value = input[key], !value.isNull else { return nil }
            return (key, value)
        }
        return pairs.isEmpty ? nil : .object(pairs)
    }
}

private extension GraphQLValue {
    /// A string or null, as an argument value.
    static func from(_ text: String?) -> GraphQLValue { text.map { .string($0) } ?? .null }
}
