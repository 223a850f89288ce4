import Foundation
import GraphQL
import IdentityKit

/// Seed 003's schema: every query and mutation its clients call, with the guide's names.
/// Each resolver sends the REST route's request (`CoreCall`); none runs a flow itself.
enum IdentitySchema {
    static let schema = Schema(query: query, mutation: mutation, types: types)

    /// Mutations that sign a user in: at most one per request (a document cannot be a
    /// credential-stuffing batch).
    static let signInFields: Set<String> = ["register", "login", "loginWithApple", "loginWithIdToken", "loginWithFirebase",
                                            "loginWithPhone", "verifyPasskeyAuthentication", "verifyLoginTwoFactor"]

    private static func s(_ name: String) -> TypeRef { .named(name) }
    private static func req(_ name: String) -> TypeRef { .nonNull(.named(name)) }
    private static func listOf(_ name: String) -> TypeRef { .nonNull(.list(.nonNull(.named(name)))) }

    private static func core(_ info: ResolveInfo) throws -> CoreCall {
        guard let call = info.context as? CoreCall else { throw GraphQLError("Internal error.", code: ServiceError.internal.code) }
        return call
    }

    private static func text(_ info: ResolveInfo, _ name: String) -> String? { info.argument(name).string }

    private static func input(_ info: ResolveInfo, _ name: String = "input") -> GraphQLValue { info.argument(name) }

    /// The address and code of a mailed link's `token` argument (`MailActionToken`: what seed
    /// 003's clients pass on alone), else the `email` argument and the token as the bare code.
    private static func mailed(_ info: ResolveInfo) -> (email: GraphQLValue, code: GraphQLValue) {
        let email = info.argument("email")
        if email.isNull, let token = text(info, "token"), let pair = MailActionToken.decode(token) {
            return (.string(pair.email), .string(pair.code))
        }
        return (email, info.argument("token"))
    }

    /// A JSON body from (core key, value) pairs, nulls left out.
    private static func body(_ pairs: [(String, GraphQLValue?)]) -> JSONValue {
        var object: [String: JSONValue] = [:]
        for (key, value) in pairs {
            guard let value, !value.isNull else { continue }
            object[key] = GraphQLBridge.json(value)
        }
        return .object(object)
    }

    private static func success(_ message: String? = nil, _ extra: [(String, GraphQLValue)] = []) -> GraphQLValue {
        .object([("success", .bool(true)), ("message", message.map { .string($0) } ?? .null)] + extra)
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
            GraphQLBridge.user(try await core(info).data("GET", "/v1/me"))
        },
        Field("isEmailVerified", req("Boolean")) { info in
            GraphQLBridge.value(try await core(info).data("GET", "/v1/me")["email_verified"] ?? .bool(false))
        },
        Field("verifyResetToken", req("ResetTokenValidation"), arguments: [
            InputValue("token", req("String"), description: "The link's token (or the code from the reset mail, with email)."),
            InputValue("email", s("String"), description: "The account's address, when token is the bare code."),
        ]) { info in
            let (email, code) = mailed(info)
            let data = try await core(info).data("POST", "/v1/auth/password/verify-code",
                                                  body: body([("email", email), ("code", code)]))
            let valid = data["valid"] == .bool(true)
            return .object([("valid", .bool(valid)), ("message", .string(valid ? "The code is valid." : "The code is invalid or expired."))])
        },
        Field("twoFactorStatus", req("TwoFactorStatus")) { info in
            let data = try await core(info).data("GET", "/v1/me/mfa")
            return .object([("isEnabled", GraphQLBridge.value(data["enabled"] ?? .bool(false))),
                            ("backupCodesCount", GraphQLBridge.value(data["backup_codes_remaining"] ?? .number(0))),
                            ("lastUsed", GraphQLBridge.value(data["last_used_at"] ?? .null)),
                            ("setupDate", GraphQLBridge.value(data["enabled_at"] ?? .null)),
                            ("methods", GraphQLBridge.value(data["methods"] ?? .array([])))])
        },
        Field("myPasskeys", listOf("Passkey")) { info in
            guard case .array(let items) = try await core(info).data("GET", "/v1/me/passkeys") else { return .list([]) }
            return .list(items.map(passkey))
        },
        Field("getUserDeviceTokens", listOf("DeviceToken")) { info in
            guard case .array(let items) = try await core(info).data("GET", "/v1/me/devices") else { return .list([]) }
            return .list(items.map(device))
        },
    ])

    private static func passkey(_ item: JSONValue) -> GraphQLValue {
        .object([("id", GraphQLBridge.value(item["id"] ?? .null)), ("name", GraphQLBridge.value(item["name"] ?? .null)),
                 ("createdAt", GraphQLBridge.value(item["created_at"] ?? .null)),
                 ("lastUsedAt", GraphQLBridge.value(item["last_used_at"] ?? .null)),
                 ("backedUp", GraphQLBridge.value(item["backup_state"] ?? .bool(false)))])
    }

    private static func device(_ item: JSONValue) -> GraphQLValue {
        .object([("id", GraphQLBridge.value(item["id"] ?? .null)), ("token", GraphQLBridge.value(item["token"] ?? .null)),
                 ("platform", GraphQLBridge.value(item["platform"] ?? .null)), ("tokenType", GraphQLBridge.value(item["kind"] ?? .null)),
                 ("deviceName", GraphQLBridge.value(item["device_name"] ?? .null)), ("isActive", .bool(true)),
                 ("createdAt", GraphQLBridge.value(item["created_at"] ?? .null))])
    }

    // MARK: mutations

    static let mutation = ObjectType("Mutation", fields: [
        Field("register", req("AuthPayload"), arguments: [InputValue("input", req("UserRegistrationInput"))]) { info in
            let input = input(info)
            // bio, dateOfBirth, gender, accountType: the core has no columns for them; they go
            // into the new user's user_metadata (PATCH /v1/me, as the user could do it).
            return try await core(info).signIn("POST", "/v1/auth/sign-up", body: body([
                ("email", input["email"]), ("password", input["password"]), ("username", input["username"]),
                ("locale", input["locale"]),
            ]), userMetadata: profileMetadata(input).map(GraphQLBridge.json))
        },
        Field("login", req("AuthPayload"), arguments: [InputValue("input", req("UserLoginInput"))]) { info in
            let input = input(info)
            return try await core(info).signIn("POST", "/v1/auth/sign-in", body: body([("identifier", input["identifier"]),
                                                                                       ("password", input["password"])]))
        },
        Field("loginWithApple", req("AuthPayload"), arguments: [
            InputValue("identityToken", req("String")), InputValue("authorizationCode", req("String")),
            InputValue("email", s("String")), InputValue("firstName", s("String")), InputValue("lastName", s("String")),
            InputValue("nonce", s("String"), description: "The nonce the identity token was requested with (GET /v1/auth/nonce, or the client's own for apps with apple_nonce=client); apps with apple_nonce=none accept none."),
        ]) { info in
            try await core(info).signIn("POST", "/v1/auth/apple", body: body([
                ("identity_token", info.argument("identityToken")), ("authorization_code", info.argument("authorizationCode")),
                // The guide's clients send no nonce: "" then, which only an app with `apple_nonce`
                // `none` accepts (the token itself is then single use); any other app refuses it.
                ("nonce", info.argument("nonce").isNull ? .string("") : info.argument("nonce")),
                ("first_name", info.argument("firstName")), ("last_name", info.argument("lastName")),
            ]))
        },
        Field("loginWithIdToken", req("AuthPayload"), arguments: idTokenArguments, resolve: idTokenSignIn),
        Field("loginWithFirebase", req("AuthPayload"), arguments: idTokenArguments,
              deprecationReason: "Use loginWithIdToken.", resolve: idTokenSignIn),
        // Phone sign-in: POST /v1/auth/phone/send and /verify. A refused number (a calling code
        // the app does not allow, a cap) answers like a sent code there, so here too.
        Field("requestPhoneOtp", req("PhoneOtpResponse"), arguments: [InputValue("phone", req("String")), InputValue("countryCode", s("String"))]) { info in
            let data = try await core(info).data("POST", "/v1/auth/phone/send", body: body([
                ("phone", info.argument("phone")), ("country_code", info.argument("countryCode"))]))
            return .object([("success", .bool(true)), ("sessionId", GraphQLBridge.value(data["session_id"] ?? .null)),
                            ("expiresIn", GraphQLBridge.value(data["expires_in"] ?? .null))])
        },
        Field("loginWithPhone", req("AuthPayload"), arguments: [InputValue("input", req("PhoneLoginInput"))]) { info in
            let input = input(info)
            return try await core(info).signIn("POST", "/v1/auth/phone/verify", body: body([
                ("session_id", input["sessionId"]), ("code", input["code"])]))
        },
        Field("generatePasskeyAuthenticationOptions", req("PasskeyOptions"), arguments: [InputValue("identifier", s("String"))]) { info in
            let data = try await core(info).data("POST", "/v1/auth/passkey/options", body: body([("identifier", info.argument("identifier"))]))
            return .object([("flowId", GraphQLBridge.value(data["flow_id"] ?? .null)), ("options", GraphQLBridge.value(data["options"] ?? .null)),
                            ("hasPasskeys", GraphQLBridge.value(data["has_passkeys"] ?? .bool(false)))])
        },
        Field("verifyPasskeyAuthentication", req("AuthPayload"), arguments: [InputValue("flowId", req("String")), InputValue("response", req("JSON"))]) { info in
            try await core(info).signIn("POST", "/v1/auth/passkey/verify", body: body([("flow_id", info.argument("flowId")),
                                                                                       ("response", info.argument("response"))]))
        },
        Field("generatePasskeyRegistrationOptions", req("PasskeyOptions")) { info in
            let data = try await core(info).data("POST", "/v1/me/passkeys/options", body: .object([:]))
            return .object([("flowId", GraphQLBridge.value(data["flow_id"] ?? .null)), ("options", GraphQLBridge.value(data["options"] ?? .null)),
                            ("hasPasskeys", .bool(true))])
        },
        Field("verifyPasskeyRegistration", req("Passkey"), arguments: [InputValue("flowId", req("String")), InputValue("response", req("JSON")),
                                                                        InputValue("name", s("String"))]) { info in
            passkey(try await core(info).data("POST", "/v1/me/passkeys", body: body([
                ("flow_id", info.argument("flowId")), ("response", info.argument("response")), ("name", info.argument("name"))])))
        },
        Field("deletePasskey", req("Boolean"), arguments: [InputValue("id", .nonNull(.named("ID")))]) { info in
            _ = try await core(info).data("DELETE", "/v1/me/passkeys/" + pathSegment(text(info, "id")))
            return .bool(true)
        },
        Field("setupTwoFactor", req("TwoFactorSetupResponse")) { info in try await totpSetup(info) },
        Field("enableTwoFactor", req("TwoFactorSetupResponse"), arguments: [InputValue("input", req("EnableTwoFactorInput"))]) { info in
            switch input(info)["method"]?.string ?? "" {
            case "authenticator", "totp":
                return try await totpSetup(info)
            case "email":
                let data = try await core(info).data("POST", "/v1/me/mfa/email")
                return success("A code was sent to your email address.", [("method", .string("email")), ("codeLength", .int(6)),
                                                                           ("expiresIn", GraphQLBridge.value(data["expires_in"] ?? .null))])
            case "sms":
                // The code goes to the account's verified phone (linked first with
                // /v1/me/phone); a `phoneNumber` given here does not choose where it goes.
                let data = try await core(info).data("POST", "/v1/me/mfa/sms")
                return success("A code was sent to your phone.", [("method", .string("sms")), ("codeLength", .int(6)),
                                                                  ("expiresIn", GraphQLBridge.value(data["expires_in"] ?? .null))])
            default:
                throw GraphQLError("method must be authenticator, sms or email.", code: ServiceError.validationFailed([]).code,
                                   extensions: [("status", .int(422))])
            }
        },
        Field("verifyTwoFactorSetup", req("BackupCodesResponse"), arguments: [InputValue("input", req("TwoFactorSetupInput"))]) { info in
            let method = input(info)["method"]?.string ?? ""
            let path = ["email", "sms"].contains(method) ? "/v1/me/mfa/\(method)/confirm" : "/v1/me/mfa/totp/confirm"
            let data = try await core(info).data("POST", path, body: body([("code", input(info)["code"])]))
            return success("Two-factor authentication is on.", [("backupCodes", GraphQLBridge.value(data["backup_codes"] ?? .null))])
        },
        Field("disableTwoFactor", req("SuccessResponse"), arguments: [InputValue("input", req("TwoFactorVerifyInput"))]) { info in
            _ = try await core(info).data("DELETE", "/v1/me/mfa", body: body([("code", input(info)["code"])]))
            return success("Two-factor authentication is off.")
        },
        Field("regenerateBackupCodes", req("BackupCodesResponse")) { info in
            let data = try await core(info).data("POST", "/v1/me/mfa/backup-codes", body: .object([:]))
            return success(nil, [("backupCodes", GraphQLBridge.value(data["backup_codes"] ?? .null))])
        },
        Field("verifyLoginTwoFactor", req("AuthPayload"), arguments: [InputValue("twoFactorToken", req("String")), InputValue("code", req("String"))]) { info in
            try await core(info).signIn("POST", "/v1/auth/mfa/verify", body: body([("challenge_token", info.argument("twoFactorToken")),
                                                                                  ("code", info.argument("code"))]))
        },
        Field("requestPasswordReset", req("SuccessResponse"), arguments: [InputValue("email", req("String"))]) { info in
            _ = try await core(info).data("POST", "/v1/auth/password/forgot", body: body([("email", info.argument("email"))]))
            return success("If an account uses this address, a reset code was sent to it.")
        },
        Field("resetPassword", req("SuccessResponse"), arguments: [
            InputValue("token", req("String"), description: "The link's token (or the code from the reset mail, with email)."),
            InputValue("newPassword", req("String")),
            InputValue("email", s("String"), description: "The account's address, when token is the bare code."),
        ]) { info in
            let (email, code) = mailed(info)
            _ = try await core(info).data("POST", "/v1/auth/password/reset", body: body([
                ("email", email), ("code", code), ("password", info.argument("newPassword"))]))
            return success("The password was changed.")
        },
        Field("changePassword", req("SuccessResponse"), arguments: [InputValue("input", req("ChangePasswordInput"))]) { info in
            _ = try await core(info).data("POST", "/v1/me/password", body: body([("current_password", input(info)["currentPassword"]),
                                                                                ("new_password", input(info)["newPassword"])]))
            return success("The password was changed.")
        },
        Field("sendEmailVerification", req("SuccessResponse"), resolve: sendVerification),
        Field("resendEmailVerification", req("SuccessResponse"), resolve: sendVerification),
        Field("verifyEmail", req("SuccessResponse"), arguments: [
            InputValue("token", req("String"), description: "The link's token (or the code from the verification mail)."),
            InputValue("email", s("String"), description: "The address verified; from the link's token, else the signed-in user's."),
        ]) { info in
            let call = try core(info)
            var (email, code) = mailed(info)
            if email.isNull, call.request.header("authorization") != nil {
                email = GraphQLBridge.value(try await call.data("GET", "/v1/me")["email"] ?? .null)
            }
            _ = try await call.data("POST", "/v1/auth/email/verify", body: body([("email", email), ("code", code)]))
            return success("The email address is verified.")
        },
        // The signed-in user's new address: POST /v1/me/email/change (a fresh sign-in, else
        // auth/reauth-required), then /confirm with the code mailed to the new address.
        Field("startEmailChange", req("SuccessResponse"), arguments: [
            InputValue("email", req("String"), description: "The new address; the code is mailed to it."),
        ]) { info in
            _ = try await core(info).data("POST", "/v1/me/email/change", body: body([("email", info.argument("email"))]))
            return success("A code was sent to the new address.")
        },
        Field("confirmEmailChange", req("User"), arguments: [
            InputValue("code", req("String"), description: "The code mailed to the new address."),
        ]) { info in
            GraphQLBridge.user(try await core(info).data("POST", "/v1/me/email/change/confirm", body: body([
                ("code", info.argument("code"))])))
        },
        Field("registerDeviceToken", req("DeviceToken"), arguments: [InputValue("input", req("RegisterDeviceTokenInput"))]) { info in
            let input = input(info)
            return device(try await core(info).data("POST", "/v1/me/devices", body: body([
                ("token", input["token"]), ("platform", input["platform"]), ("kind", input["tokenType"] ?? .string("fcm")),
                ("device_name", input["deviceName"])])))
        },
        Field("deleteDeviceToken", req("Boolean"), arguments: [InputValue("tokenId", .nonNull(.named("ID")))]) { info in
            _ = try await core(info).data("DELETE", "/v1/me/devices/" + pathSegment(text(info, "tokenId")))
            return .bool(true)
        },
    ])

    private static let idTokenArguments = [InputValue("idToken", req("String")), InputValue("email", s("String")),
                                           InputValue("displayName", s("String")), InputValue("photoURL", s("String"))]

    /// `loginWithIdToken` and its deprecated alias: a Firebase id token (Google or phone
    /// behind it), as `POST /v1/auth/id-token`.
    @Sendable private static func idTokenSignIn(_ info: ResolveInfo) async throws -> GraphQLValue {
        var names: [String] = []
        if let display = text(info, "displayName") { names = display.split(separator: " ", maxSplits: 1).map(String.init) }
        return try await core(info).signIn("POST", "/v1/auth/id-token", body: body([
            ("provider", .string("firebase")), ("id_token", info.argument("idToken")),
            ("first_name", names.first.map { .string($0) }), ("last_name", names.count > 1 ? .string(names[1]) : nil),
        ]))
    }

    @Sendable private static func sendVerification(_ info: ResolveInfo) async throws -> GraphQLValue {
        _ = try await core(info).data("POST", "/v1/me/email/verification")
        return success("A verification code was sent.")
    }

    private static func totpSetup(_ info: ResolveInfo) async throws -> GraphQLValue {
        let data = try await core(info).data("POST", "/v1/me/mfa/totp", body: .object([:]))
        var qrCode: GraphQLValue = .null
        if case .string(let svg)? = data["qr_svg"] { qrCode = .string("data:image/svg+xml;base64," + Data(svg.utf8).base64EncodedString()) }
        return success(nil, [("method", .string("authenticator")), ("qrCode", qrCode), ("qrCodeSvg", GraphQLBridge.value(data["qr_svg"] ?? .null)),
                             ("secret", GraphQLBridge.value(data["secret"] ?? .null)),
                             ("otpauthUri", GraphQLBridge.value(data["otpauth_uri"] ?? .null)), ("codeLength", .int(6))])
    }

    /// The guide's profile fields, kept as user metadata (the core has no columns for them).
    private static func profileMetadata(_ input: GraphQLValue) -> GraphQLValue? {
        let pairs = ["bio", "dateOfBirth", "gender", "accountType"].compactMap { key -> (String, GraphQLValue)? in
            guard let value = input[key], !value.isNull else { return nil }
            return (key, value)
        }
        return pairs.isEmpty ? nil : .object(pairs)
    }

    /// An id as one path segment: anything but letters, digits, `-` and `_` makes it an id no
    /// route has (404), never another path.
    private static func pathSegment(_ id: String?) -> String {
        guard let id, !id.isEmpty, id.utf8.count <= 128,
              id.unicodeScalars.allSatisfy({ CharacterSet.alphanumerics.contains($0) && $0.isASCII || $0 == "-" || $0 == "_" }) else {
            return "-"
        }
        return id
    }
}
