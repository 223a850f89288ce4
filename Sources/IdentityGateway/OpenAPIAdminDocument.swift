import Foundation
import IdentityKit

/// The admin API's part of the OpenAPI document (operations, bodies, success answers; errors
/// are rendered from the route table as for every route), merged into `OpenAPIDocument.baseJSON`
/// to make `OpenAPIDocument.json`. Its operations use the `secretKey` security scheme: the
/// app's secret key as a bearer token, never a user's access token.
enum OpenAPIAdminDocument {
    static let paths = #"""
    {
      "/v1/admin/users": {
        "get": {
          "summary": "The app's users, newest first, with filters and a cursor",
          "operationId": "adminListUsers",
          "security": [{"secretKey": []}],
          "parameters": [
            {"name": "limit", "in": "query", "schema": {"type": "integer", "minimum": 1, "maximum": 100, "default": 50}},
            {"name": "cursor", "in": "query", "description": "next_cursor of the previous page", "schema": {"type": "string"}},
            {"name": "email", "in": "query", "description": "Email prefix, case-insensitive", "schema": {"type": "string", "maxLength": 254}},
            {"name": "phone", "in": "query", "description": "Phone prefix", "schema": {"type": "string", "maxLength": 32}},
            {"name": "username", "in": "query", "description": "Username prefix, case-insensitive", "schema": {"type": "string", "maxLength": 32}},
            {"name": "provider", "in": "query", "schema": {"enum": ["password", "apple", "google", "firebase"]}},
            {"name": "created_after", "in": "query", "schema": {"type": "string", "format": "date-time"}},
            {"name": "created_before", "in": "query", "schema": {"type": "string", "format": "date-time"}},
            {"name": "disabled", "in": "query", "schema": {"type": "boolean"}},
            {"name": "guest", "in": "query", "schema": {"type": "boolean"}}
          ],
          "responses": {"200": {"description": "A page of users", "content": {"application/json": {"schema": {
            "type": "object", "required": ["data", "next_cursor"],
            "properties": {"data": {"type": "array", "items": {"$ref": "#/components/schemas/AdminUser"}},
                           "next_cursor": {"type": ["string", "null"]}}}}}}}
        }
      },
      "/v1/admin/users/{uid}": {
        "get": {
          "summary": "One user, with its custom claims and whether it is disabled",
          "operationId": "adminGetUser",
          "security": [{"secretKey": []}],
          "parameters": [{"$ref": "#/components/parameters/Uid"}],
          "responses": {"200": {"$ref": "#/components/responses/AdminUser"}}
        }
      },
      "/v1/admin/secret-keys/rotate": {
        "post": {
          "summary": "A new secret key (shown once); the live keys keep working for overlap_seconds",
          "operationId": "adminRotateSecretKey",
          "security": [{"secretKey": []}],
          "requestBody": {"required": true, "content": {"application/json": {"schema": {
            "type": "object", "properties": {"overlap_seconds": {"type": "integer", "minimum": 0, "maximum": 2592000, "default": 86400}}}}}},
          "responses": {"201": {"description": "The new key", "content": {"application/json": {"schema": {
            "type": "object", "required": ["data"], "properties": {"data": {
              "type": "object", "required": ["key_id", "secret_key", "previous_key_ids", "previous_keys_expire_at"],
              "properties": {"key_id": {"type": "string"}, "secret_key": {"type": "string"},
                             "previous_key_ids": {"type": "array", "items": {"type": "string"}},
                             "previous_keys_expire_at": {"type": ["string", "null"], "format": "date-time"}}}}}}}}}
        }
      },
      "/v1/admin/audit": {
        "get": {
          "summary": "The app's audit log (admin calls and security events), newest first",
          "operationId": "adminAuditLog",
          "security": [{"secretKey": []}],
          "parameters": [
            {"name": "limit", "in": "query", "schema": {"type": "integer", "minimum": 1, "maximum": 200, "default": 50}},
            {"name": "cursor", "in": "query", "description": "next_cursor of the previous page", "schema": {"type": "string"}},
            {"name": "actor", "in": "query", "description": "e.g. secret_key:skid_…", "schema": {"type": "string"}},
            {"name": "action", "in": "query", "description": "e.g. admin.users.disable", "schema": {"type": "string"}},
            {"name": "target", "in": "query", "description": "e.g. user:<uid>", "schema": {"type": "string"}},
            {"name": "since", "in": "query", "schema": {"type": "string", "format": "date-time"}},
            {"name": "until", "in": "query", "schema": {"type": "string", "format": "date-time"}}
          ],
          "responses": {"200": {"description": "Audit rows", "content": {"application/json": {"schema": {
            "type": "object", "required": ["data", "next_cursor"],
            "properties": {"data": {"type": "array", "items": {"$ref": "#/components/schemas/AuditRow"}},
                           "next_cursor": {"type": ["string", "null"]}}}}}}}
        }
      }
    }
    """#

    static let components = #"""
    {
      "securitySchemes": {
        "secretKey": {"type": "http", "scheme": "bearer", "bearerFormat": "sk_…",
                      "description": "The app's secret key (app backends only; never a user's access token). Rotate it with POST /v1/admin/secret-keys/rotate."},
        "secretKeyBasic": {"type": "http", "scheme": "basic",
                           "description": "Introspection (RFC 7662 §2.1): the app id as user name, the secret key as password."}
      },
      "parameters": {
        "Uid": {"name": "uid", "in": "path", "required": true, "schema": {"type": "string"}}
      },
      "responses": {
        "AdminUser": {"description": "The user", "content": {"application/json": {"schema": {
          "type": "object", "required": ["data"], "properties": {"data": {"$ref": "#/components/schemas/AdminUser"}}}}}}
      },
      "schemas": {
        "AdminUser": {"allOf": [{"$ref": "#/components/schemas/User"}, {
          "type": "object", "required": ["custom_claims", "disabled"],
          "properties": {"custom_claims": {"type": "object"}, "disabled": {"type": "boolean"}}}]},
        "AuditRow": {
          "type": "object", "required": ["id", "at", "actor", "action", "target", "ip", "request_id", "detail"],
          "properties": {"id": {"type": "string"}, "at": {"type": "string", "format": "date-time"},
                         "actor": {"type": "string"}, "action": {"type": "string"},
                         "target": {"type": ["string", "null"]}, "ip": {"type": ["string", "null"]},
                         "request_id": {"type": ["string", "null"]}, "detail": {"type": "object"}}
        }
      }
    }
    """#

    /// `base` with these paths and components added (each component kind merged by name).
    static func merged(into base: String) -> String {
        guard case .object(var document)? = JSONValue.parse(Data(base.utf8), maximumBytes: 1 << 20),
              case .object(var basePaths)? = document["paths"],
              case .object(let adminPaths)? = JSONValue.parse(Data(paths.utf8), maximumBytes: 1 << 20),
              case .object(var baseComponents)? = document["components"],
              case .object(let adminComponents)? = JSONValue.parse(Data(components.utf8), maximumBytes: 1 << 20)
        else { return base }
        basePaths.merge(adminPaths) { $1 }
        for (kind, entries) in adminComponents {
            guard case .object(let added) = entries else { continue }
            var existing: [String: JSONValue] = [:]
            if case .object(let current)? = baseComponents[kind] { existing = current }
            existing.merge(added) { $1 }
            baseComponents[kind] = .object(existing)
        }
        document["paths"] = .object(basePaths)
        document["components"] = .object(baseComponents)
        return JSONValue.object(document).serialized
    }
}

extension OpenAPIDocument {
    /// The whole source document: the base and the admin API.
    static let json = OpenAPIImportKeysDocument.merged(into: OpenAPIAdminDocument.merged(into: baseJSON))
}
