import Foundation
import IdentityKit

/// One OpenAPI document per client profile, at `GET /api/docs/profiles/<profile>/openapi.json`
/// (`standard` is `/api/docs/openapi.json` itself). A document per profile rather than one
/// document with tags: the same path and method answer differently per app (`POST
/// /v1/auth/apple/token` exists only for session-object apps; `GET /me` answers a different
/// shape than `GET /v1/me`), which one document cannot state without overlapping operations;
/// and code generators take one document per client. (libmicrohttpd hands the gateway the path
/// without its query string, hence a path rather than `?profile=`.)
///
/// Each operation is derived from the core route it maps onto (`Mapping.core`): its error codes
/// are the core route's documented errors (`OpenAPIRendering.documentedErrors`), passed
/// through the profile's error mapping, so they cannot drift from the route table.
enum ProfileDocuments {
    struct Mapping {
        let method: String
        let path: String
        let core: (method: String, pattern: String)
        let summary: String
        let body: JSONValue?
        let answer: JSONValue
    }

    static func string(_ maxLength: Int? = nil) -> JSONValue {
        var schema: [String: JSONValue] = ["type": .string("string")]
        if let maxLength { schema["maxLength"] = JSONValue(maxLength) }
        return .object(schema)
    }

    static func object(_ properties: [String: JSONValue], required: [String]) -> JSONValue {
        .object(["type": .string("object"), "properties": .object(properties), "required": .array(required.map { .string($0) })])
    }

    static let singleTokenUser = object(["id": string(), "isGuest": .object(["type": .string("boolean")]),
                                         "email": .object(["type": .array([.string("string"), .string("null")])]),
                                         "name": .object(["type": .array([.string("string"), .string("null")])])],
                                        required: ["id", "isGuest", "email", "name"])
    static let singleTokenAnswer = object(["token": string(), "user": singleTokenUser], required: ["token", "user"])

    static let singleToken: [Mapping] = [
        Mapping(method: "POST", path: "/auth/guest", core: ("POST", "/v1/auth/guest"), summary: "Guest login",
                body: object(["secret": string()], required: ["secret"]), answer: singleTokenAnswer),
        Mapping(method: "GET", path: "/auth/nonce", core: ("GET", "/v1/auth/nonce"), summary: "A nonce for Sign in with Apple",
                body: nil, answer: object(["nonce": string()], required: ["nonce"])),
        Mapping(method: "POST", path: "/auth/apple", core: ("POST", "/v1/auth/apple"), summary: "Sign in with Apple (a guest's token upgrades the guest)",
                body: object(["identityToken": string(), "authorizationCode": string(4096), "nonce": string(),
                              "fullName": .object(["type": .array([.string("string"), .string("null")]), "maxLength": JSONValue(200)])],
                             required: ["identityToken", "nonce"]), answer: singleTokenAnswer),
        Mapping(method: "POST", path: "/auth/google", core: ("POST", "/v1/auth/google"), summary: "Sign in with Google (a guest's token upgrades the guest)",
                body: object(["idToken": string()], required: ["idToken"]), answer: singleTokenAnswer),
        Mapping(method: "GET", path: "/me", core: ("GET", "/v1/me"), summary: "The current user", body: nil, answer: singleTokenUser),
        Mapping(method: "DELETE", path: "/me", core: ("DELETE", "/v1/me"),
                summary: "Delete the account given fresh proof: Apple {identityToken, authorizationCode, nonce}, Google {identityToken}, guest {secret}",
                body: object(["identityToken": string(16_384), "authorizationCode": string(4096), "nonce": string(), "secret": string()],
                             required: []), answer: .null),
    ]

    static let sessionObjectAnswer: JSONValue = object([
        "token": string(),
        "session": object(["id": string(), "created_at": string(), "expires_at": string(), "last_seen_at": string(),
                           "current": .object(["type": .string("boolean")]), "mfa_verified": .object(["type": .string("boolean")]),
                           "ip": .object(["type": .array([.string("string"), .string("null")])]),
                           "user_agent": .object(["type": .array([.string("string"), .string("null")])])],
                          required: ["id", "created_at", "expires_at", "last_seen_at", "current", "mfa_verified", "ip", "user_agent"]),
        "user": object(["id": string(), "email": .object(["type": .array([.string("string"), .string("null")])]),
                        "email_verified": .object(["type": .string("boolean")]), "has_password": .object(["type": .string("boolean")]),
                        "roles": .object(["type": .string("array"), "items": string()]), "created_at": string()],
                       required: ["id", "email", "email_verified", "has_password", "roles", "created_at"]),
    ], required: ["session", "user"])
    static let transport: JSONValue = .object(["type": .string("string"), "enum": .array([.string("bearer"), .string("cookie")]),
                                               "default": .string("bearer")])

    static let sessionObject: [Mapping] = [
        Mapping(method: "POST", path: "/v1/auth/login", core: ("POST", "/v1/auth/sign-in"), summary: "Sign in with email and password",
                body: object(["email": string(), "password": string(), "transport": transport], required: ["email", "password"]),
                answer: sessionObjectAnswer),
        Mapping(method: "POST", path: "/v1/auth/apple/nonce", core: ("GET", "/v1/auth/nonce"), summary: "A nonce for Sign in with Apple",
                body: nil, answer: object(["nonce": string(), "expires_at": string()], required: ["nonce", "expires_at"])),
        Mapping(method: "POST", path: "/v1/auth/apple/token", core: ("POST", "/v1/auth/apple"),
                summary: "Sign in with an Apple ID token; transport cookie: the token in an HttpOnly __Host-session cookie",
                body: object(["id_token": string(16_384), "nonce": string(256), "authorization_code": string(4096),
                              "name": .object(["type": .string("string"), "minLength": JSONValue(1), "maxLength": JSONValue(200)]), "transport": transport],
                             required: ["id_token", "nonce"]), answer: sessionObjectAnswer),
    ]

    /// The documents, by profile name, rendered once at start.
    static func rendered(routes: [Route]) -> [String: Data] {
        let errorSchema: JSONValue = object(["error": object(["code": string(), "message": string()], required: ["code", "message"])],
                                            required: ["error"])
        var documents: [String: Data] = [:]
        for (profile, mappings) in [(ClientProfile.Shape.singleToken, singleToken), (.sessionObject, sessionObject)] {
            var paths: [String: JSONValue] = [:]
            for mapping in mappings {
                guard let route = routes.first(where: { $0.method == mapping.core.method && $0.pattern == mapping.core.pattern })
                else { continue }
                var responses: [String: JSONValue] = [:]
                let success = mapping.answer == .null ? "204" : "200"
                responses[success] = mapping.answer == .null ? .object(["description": .string("Done")])
                    : .object(["description": .string("OK"),
                               "content": .object(["application/json": .object(["schema": mapping.answer])])])
                for (status, errors) in OpenAPIDocument.documentedErrors(of: route) {
                    if profile == .singleToken {
                        for error in errors {
                            let mapped = SingleTokenEdge.error(.problem(error, requestId: ""))
                            guard case .value(let body) = JSONValue.parseBody(mapped.body),
                                  case .string(let code)? = body["error"]?["code"] else { continue }
                            var codes: [JSONValue] = []
                            if case .object(let existing)? = responses[String(mapped.status)],
                               case .array(let known)? = existing["x-error-codes"] { codes = known }
                            if !codes.contains(.string(code)) { codes.append(.string(code)) }
                            responses[String(mapped.status)] = .object([
                                "description": .string(HTTPResponse.reasonPhrase(mapped.status)), "x-error-codes": .array(codes),
                                "content": .object(["application/json": .object(["schema": errorSchema])])])
                        }
                    } else {
                        responses[String(status)] = .object([
                            "description": .string(HTTPResponse.reasonPhrase(status)),
                            "x-error-codes": .array(errors.map { .string($0.code) }),
                            "content": .object(["application/problem+json": .object(["schema": object(
                                ["code": string(), "status": .object(["const": JSONValue(status)]), "detail": string(),
                                 "request_id": string()], required: ["code", "status", "request_id"])])])])
                    }
                }
                var operation: [String: JSONValue] = ["summary": .string(mapping.summary), "responses": .object(responses),
                                                      "x-core-operation": .string("\(mapping.core.method) \(mapping.core.pattern)")]
                if let body = mapping.body {
                    operation["requestBody"] = .object(["required": .bool(mapping.method != "DELETE"),
                                                        "content": .object(["application/json": .object(["schema": body])])])
                }
                var item: [String: JSONValue] = [:]
                if case .object(let existing)? = paths[mapping.path] { item = existing }
                item[mapping.method.lowercased()] = .object(operation)
                paths[mapping.path] = .object(item)
            }
            let document: JSONValue = .object([
                "openapi": .string("3.1.0"),
                "info": .object(["title": .string("Identity service: client profile \(profile.rawValue)"), "version": .string("1")]),
                "paths": .object(paths),
            ])
            documents[profile.rawValue] = Data(document.serialized.utf8)
        }
        return documents
    }
}
