import Foundation
import XCTest
@testable import IdentityGateway
@testable import IdentityKit

/// What the gateway answers is what answers.proto declares: each renderer's output, for a reply
/// with its optional values absent and one with them present, has exactly the shape's fields
/// (those marked omitted only when they have a value) and every value has the declared type.
/// The schemas are the generated ones, read from the served document.
final class AnswerShapeDriftTests: XCTestCase {
    private var schemas: [String: JSONValue] = [:]

    override func setUpWithError() throws {
        let document = try XCTUnwrap(OpenAPIDocument.source(routes: try servedRoutesForTests()))
        guard case .object(let schemas)? = document["components"]?["schemas"] else { return XCTFail("no schemas") }
        self.schemas = schemas
    }

    func testEveryShapeIsAComponentAndEveryResponseCarriesOne() throws {
        XCTAssertGreaterThanOrEqual(DeclaredOperation.answerSchemas.count, 15)
        let base = try XCTUnwrap(JSONValue.parse(Data(OpenAPIDocument.json.utf8), maximumBytes: 1 << 20))
        for name in DeclaredOperation.answerSchemas.keys {
            XCTAssertNil(base["components"]?["schemas"]?[name], "\(name) is generated; remove its hand-written copy")
        }
        for (name, text) in DeclaredOperation.answerResponses {
            let response = try XCTUnwrap(JSONValue.parse(Data(text.utf8)), name)
            XCTAssertNotNil(response["content"]?["application/json"]?["schema"], name)
        }
    }

    func testUserAndSignInAnswers() throws {
        let bare = CommonV1.User(uid: "u_1", createdAt: "2026-11-30T09:14:03Z", appMetadataJson: "{}", userMetadataJson: "{}")
        var full = bare
        full.email = "ada@example.com"; full.phone = "+14155550123"; full.username = "ada"; full.firstName = "Ada"
        full.lastName = "L"; full.photoUrl = "https://example.com/a.png"; full.providers = ["password"]; full.roles = ["admin"]
        for user in [bare, full] {
            try check(data(DeclaredAnswer.user(TokenV1.UserResult(user: user))), "User")
            let grant = TokenV1.AuthResult(accessToken: "a", tokenType: "Bearer", expiresIn: 900, refreshToken: "r",
                                           sessionId: "s", isNewUser: true, user: user)
            try check(data(DeclaredAnswer.tokens(grant)), "TokenGrant")
            try check(data(DeclaredAnswer.signedIn(status: 200)(grant)), "TokenGrant")
        }
        var withDevice = TokenV1.AuthResult(accessToken: "a", tokenType: "Bearer", expiresIn: 900, refreshToken: "r",
                                            sessionId: "s", user: bare)
        withDevice.deviceToken = "dt_" + String(repeating: "x", count: 40)
        try check(data(UserJSON.signIn(withDevice)), "TokenGrant")
        let challenged = TokenV1.AuthResult(mfa: TokenV1.MfaChallenge(challengeToken: "c", expiresAt: "2026-11-30T09:19:03Z",
                                                                      methods: ["totp", "backup_code"]))
        let answer = DeclaredAnswer.signedIn(status: 200)(challenged)
        XCTAssertEqual(answer.status, 202)
        try check(data(answer), "MfaRequired")
    }

    func testAccountAnswers() throws {
        try check(data(DeclaredAnswer.accepted(TokenV1.Accepted(expiresIn: 600))), "CodeSent")
        try check(data(DeclaredAnswer.phoneCodeSent(TokenV1.PhoneCodeSent(sessionId: "p", expiresIn: 600))), "PhoneCodeSent")
        try check(data(DeclaredAnswer.codeCheck(TokenV1.CodeCheck(valid: true))), "CodeCheck")
        try check(data(DeclaredAnswer.backupCodes(TokenV1.BackupCodes(backupCodes: (1...10).map { "code-\($0)" }))), "BackupCodes")
        try check(data(DeclaredAnswer.totpEnrolment(TokenV1.TotpEnrolment(secret: "S", otpauthUri: "otpauth://totp/x", qrSvg: "<svg/>"))),
                  "TotpEnrolment")
        for used in [nil, "2026-11-30T09:19:03Z"] as [String?] {
            try check(data(DeclaredAnswer.mfaStatus(TokenV1.MfaStatus(enabled: used != nil, methods: ["totp"], backupCodesRemaining: 9,
                                                                      lastUsedAt: used, enabledAt: used))), "MfaStatus")
        }
        for name in [nil, "Ada's phone"] as [String?] {
            let device = CommonV1.Device(id: "d", token: "t", platform: "ios", kind: "apns", deviceName: name, sessionId: "s",
                                         createdAt: "2026-11-30T09:14:03Z")
            try check(data(DeclaredAnswer.device(status: 201)(TokenV1.DeviceResult(device: device))), "Device")
        }
        for used in [nil, "2026-11-30T09:19:03Z"] as [String?] {
            let passkey = TokenV1.Passkey(id: "p", name: "Key", credentialId: "Y3JlZA", transports: ["internal"], aaguid: "0",
                                          createdAt: "2026-11-30T09:14:03Z", lastUsedAt: used)
            try check(data(DeclaredAnswer.passkey(status: 200)(TokenV1.PasskeyResult(passkey: passkey))), "Passkey")
            try check(data(DeclaredAnswer.passkeyList(TokenV1.PasskeyList(passkeys: [passkey]))), "Passkey", list: true)
        }
        let options = TokenV1.PasskeyOptions(flowId: "f", optionsJson: #"{"challenge":"Y2g"}"#, hasPasskeys: true)
        try check(data(DeclaredAnswer.passkeySignInOptions(options)), "PasskeySignInOptions")
        try check(data(DeclaredAnswer.passkeyOptions(options)), "PasskeyCreationOptions")
    }

    func testSessionAnswers() throws {
        for (ip, agent) in [(nil, nil), ("203.0.113.7", "Acme/1.0")] as [(String?, String?)] {
            let session = SessionStore.SessionSummary(id: "s_1", createdAtMicros: 1_764_000_000_000_000, lastSeenAtMicros: 1_764_000_100_000_000,
                                                      expiresAtMicros: 1_766_000_000_000_000, ip: ip, userAgent: agent, amr: ["pwd", "mfa"])
            try check(.array([AnswerJSON.session(session, current: true)]), "Session", list: true)
            try check(.array([AnswerJSON.sessionRecord(session)]), "SessionRecord", list: true)
        }
    }

    func testAdminAnswers() throws {
        var user = CommonV1.User(uid: "u_1", createdAt: "2026-11-30T09:14:03Z", appMetadataJson: "{}", userMetadataJson: "{}")
        try check(UserJSON.admin(user), "AdminUser")
        user.customClaimsJson = #"{"tier":"gold"}"#; user.disabled = true
        try check(.object(["data": .array([UserJSON.admin(user)]), "next_cursor": .null]), "UserPage")
        let app = AppRecord(id: "app_1", name: "Acme", appKey: "pk_1", issuer: "https://id.example.com/v1/apps/app_1", accessTokenTTL: 900)
        for (amr, aal) in [(["pwd"], 1), (["pwd", "mfa"], 2)] {
            let active = IntrospectionRoutes.active(app: app, sub: "u_1", sid: "s_1", amr: amr, aal: aal, iat: 1, exp: 901,
                                                    type: "Bearer")
            try check(active, "Introspection")
            // The JWT's own type: an integer, never a string derived from amr.
            XCTAssertEqual(active["aal"], JSONValue(aal))
        }
        try check(.object(["active": .bool(false)]), "Introspection")
        try check(.object([:]), "TokenRevoked")
    }

    func testDiscoveryIsTheDeclaredMetadataWithEndpointsUnderTheIssuersBase() throws {
        let app = AppRecord(id: "app_1", name: "Acme", appKey: "pk_1", issuer: "https://id.example.com/v1/apps/app_1", accessTokenTTL: 900)
        let metadata = DiscoveryRoutes.metadata(of: app)
        try check(metadata, "AuthorizationServerMetadata")
        XCTAssertEqual(metadata["introspection_endpoint"], "https://id.example.com/v1/token/introspect")
        XCTAssertEqual(metadata["revocation_endpoint"], "https://id.example.com/v1/token/revoke")
        XCTAssertEqual(metadata["jwks_uri"], "https://id.example.com/v1/apps/app_1/jwks.json")
        // Every endpoint it names is a route the gateway serves.
        let patterns = Set(try servedRoutesForTests().map(\.pattern))
        for name in ["introspection_endpoint", "revocation_endpoint"] {
            guard case .string(let url)? = metadata[name] else { return XCTFail(name) }
            XCTAssertTrue(patterns.contains(String(url.dropFirst("https://id.example.com".count))), name)
        }
        XCTAssertTrue(patterns.contains("/v1/apps/{app_id}/jwks.json"))
    }

    func testEverySigningKeyIsAJWKOfTheSet() throws {
        for algorithm in SigningAlgorithm.allCases {
            let jwk = try TokenSigningKey.generate(algorithm).publicJWK(kid: "k1")
            try check(.object(["keys": .array([jwk])]), "JWKSet")
        }
    }

    // MARK: - The subset of JSON Schema the generated shapes use

    private func data(_ response: HTTPResponse) throws -> JSONValue {
        let body = try XCTUnwrap(JSONValue.parse(response.body))
        return try XCTUnwrap(body["data"], "answers carry {\"data\": …}")
    }

    private func check(_ value: JSONValue, _ shape: String, list: Bool = false, file: StaticString = #filePath,
                       line: UInt = #line) throws {
        let schema: JSONValue = .object(["$ref": .string("#/components/schemas/\(shape)")])
        let problems = validate(value, list ? .object(["type": "array", "items": schema]) : schema, at: shape)
        XCTAssertEqual(problems, [], file: file, line: line)
    }

    /// `schema` with its `$ref` followed and an `allOf` made one object schema (the union of the
    /// parts' properties and required fields), so a field of any part counts as declared.
    private func resolved(_ schema: JSONValue) -> JSONValue {
        if case .string(let ref)? = schema["$ref"] {
            return resolved(schemas[String(ref.split(separator: "/").last ?? "")] ?? .null)
        }
        guard case .array(let parts)? = schema["allOf"] else { return schema }
        var properties: [String: JSONValue] = [:]
        var required: [JSONValue] = []
        for part in parts.map(resolved) {
            if case .object(let some)? = part["properties"] { properties.merge(some) { $1 } }
            if case .array(let names)? = part["required"] { required += names }
        }
        return .object(["type": "object", "properties": .object(properties), "required": .array(required)])
    }

    private func validate(_ value: JSONValue, _ schema: JSONValue, at path: String) -> [String] {
        let schema = resolved(schema)
        if schema == .null { return ["\(path): a $ref that names no schema"] }
        if case .array(let choices)? = schema["oneOf"] {
            let fitting = choices.filter { validate(value, $0, at: path).isEmpty }
            return fitting.count == 1 ? [] : ["\(path): fits \(fitting.count) of oneOf"]
        }
        if let constant = schema["const"], constant != value { return ["\(path): not \(constant.serialized)"] }
        if case .array(let allowed)? = schema["enum"], !allowed.contains(value) { return ["\(path): \(value.serialized) not allowed"] }
        var types: [String] = []
        if case .string(let one)? = schema["type"] { types = [one] }
        if case .array(let many)? = schema["type"] { types = many.compactMap { if case .string(let t) = $0 { t } else { nil } } }
        if !types.isEmpty, !types.contains(typeName(value)) { return ["\(path): \(typeName(value)), not \(types)"] }
        var problems: [String] = []
        if case .array(let items) = value, let itemSchema = schema["items"] {
            for (index, item) in items.enumerated() { problems += validate(item, itemSchema, at: "\(path)[\(index)]") }
        }
        if case .object(let fields) = value, case .object(let properties)? = schema["properties"] {
            var required: [String] = []
            if case .array(let names)? = schema["required"] { required = names.compactMap { if case .string(let n) = $0 { n } else { nil } } }
            for name in required where fields[name] == nil { problems.append("\(path).\(name): missing") }
            for (name, field) in fields {
                guard let property = properties[name] else { problems.append("\(path).\(name): not declared"); continue }
                problems += validate(field, property, at: "\(path).\(name)")
            }
        }
        return problems
    }

    private func typeName(_ value: JSONValue) -> String {
        switch value {
        case .null: "null"
        case .bool: "boolean"
        case .number(let number): number.rounded() == number ? "integer" : "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }
}
