/// The OpenAPI 3.1 document served at `GET /api/docs/openapi.json`, before rendering
/// (`OpenAPIRendering.swift`). Each API operation's path, method, operationId, tag, security,
/// summary, and its request and answer when they are shared components, come from its
/// declaration in proto/identity/gateway/v1/gateway.proto; this file keeps the prose of the
/// document, the service's own routes (health, documents, GraphQL), the shared components, and
/// per operation (`operationParts`, by operationId) only what a declaration cannot say: inline
/// parameters, bodies and answers, or several success answers.
///
/// Here: success answers only. Every error answer (status, problem+json schema, the `code`s
/// possible), the rate limits, and `X-Request-Id` on every answer are added by the rendering
/// from the route table, so they cannot drift from what the gateway does; a test refuses an
/// error answer written here.
enum OpenAPIDocument {
    /// The document without the admin API, which `OpenAPIAdminDocument` adds (`json`).
    static let baseJSON = #"""
    {
      "openapi": "3.1.0",
      "info": {
        "title": "Identity service",
        "version": "1.0.0",
        "description": "Multi-tenant sign-in for mobile and web apps. Errors are RFC 9457 problem+json with a stable `code`; each operation lists, per status, the codes it may answer (`x-error-codes`). Any request may also be answered 400 `auth/bad-request` (ambiguous framing), 404 `auth/not-found` (unknown path), 405 `auth/method-not-allowed` (with `Allow`) or 413 `auth/payload-too-large` (a body over 64 KiB). Lengths (`minLength`, `maxLength`) count characters as JSON Schema does (Unicode scalars); no string may contain NUL (U+0000): 422 `auth/validation-failed`."
      },
      "paths": {
        "/healthz": {
          "get": {
            "summary": "Liveness",
            "operationId": "healthz",
            "security": [],
            "responses": {
              "200": {
                "description": "Alive",
                "content": {
                  "application/json": {
                    "schema": {
                      "type": "object",
                      "required": ["status"],
                      "properties": {"status": {"const": "ok"}}
                    }
                  }
                }
              }
            }
          }
        },
        "/readyz": {
          "get": {
            "summary": "Readiness: store and broker reachable",
            "operationId": "readyz",
            "security": [],
            "responses": {
              "200": {
                "description": "Ready",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Readiness"}}}
              },
              "503": {
                "description": "Store or broker unreachable",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Readiness"}}}
              }
            }
          }
        },
        "/graphql": {
          "post": {
            "summary": "GraphQL (seed 003's schema: GET /graphql?sdl). {query, variables, operationName} in, {data, errors} out; a GraphQL error (errors[].extensions.code from this catalogue) is HTTP 200. Each field sends the REST route's own request, with that route's rate limits; at most 64 KiB, depth 10, 50 aliases, one sign-in per request",
            "operationId": "graphql",
            "security": [{"appKey": []}],
            "requestBody": {
              "required": true,
              "content": {
                "application/json": {
                  "schema": {
                    "type": "object",
                    "required": ["query"],
                    "properties": {
                      "query": {"type": "string", "minLength": 1},
                      "variables": {"type": ["object", "null"]},
                      "operationName": {"type": ["string", "null"]}
                    }
                  }
                }
              }
            },
            "responses": {
              "200": {
                "description": "A GraphQL response",
                "content": {
                  "application/graphql-response+json": {
                    "schema": {
                      "type": "object",
                      "properties": {
                        "data": {"type": ["object", "null"]},
                        "errors": {"type": "array", "items": {"type": "object"}}
                      }
                    }
                  }
                }
              }
            }
          },
          "get": {
            "summary": "A query as ?query=…&variables=…&operationName=… with X-App-Key (never a mutation; no app is a GraphQL error); without query, a page to try queries; ?sdl, the schema",
            "operationId": "graphqlGet",
            "security": [],
            "responses": {
              "200": {
                "description": "A GraphQL response, the page (text/html) or the SDL (text/plain)",
                "content": {
                  "application/graphql-response+json": {"schema": {"type": "object"}},
                  "text/html": {"schema": {"type": "string"}},
                  "text/plain": {"schema": {"type": "string"}}
                }
              }
            }
          }
        },
        "/api/docs": {
          "get": {
            "summary": "This document as a page where every endpoint can be tried",
            "operationId": "docsPage",
            "security": [],
            "responses": {
              "200": {"description": "HTML page", "content": {"text/html": {"schema": {"type": "string"}}}}
            }
          }
        },
        "/api/docs/openapi.json": {
          "get": {
            "summary": "This document",
            "operationId": "openapi",
            "security": [],
            "responses": {
              "200": {
                "description": "OpenAPI 3.1 document",
                "content": {
                  "application/json": {"schema": {"type": "object", "required": ["openapi", "info", "paths"]}}
                }
              }
            }
          }
        },
        "/api/docs/profiles/session-object/openapi.json": {
          "get": {
            "summary": "The document of the session-object client profile's own routes (one document per profile, since the same path answers differently per profile)",
            "operationId": "sessionObjectOpenapi",
            "security": [],
            "responses": {
              "200": {
                "description": "OpenAPI 3.1 document",
                "content": {
                  "application/json": {"schema": {"type": "object", "required": ["openapi", "info", "paths"]}}
                }
              }
            }
          }
        },
        "/api/docs/profiles/single-token/openapi.json": {
          "get": {
            "summary": "The document of the single-token client profile's own routes (one document per profile, since the same path answers differently per profile)",
            "operationId": "singleTokenOpenapi",
            "security": [],
            "responses": {
              "200": {
                "description": "OpenAPI 3.1 document",
                "content": {
                  "application/json": {"schema": {"type": "object", "required": ["openapi", "info", "paths"]}}
                }
              }
            }
          }
        }
      },
      "components": {
        "securitySchemes": {
          "appKey": {"type": "apiKey", "in": "header", "name": "X-App-Key"},
          "bearer": {"type": "http", "scheme": "bearer", "bearerFormat": "JWT"}
        },
        "parameters": {"AppId": {"name": "app_id", "in": "path", "required": true, "schema": {"type": "string"}}},
        "headers": {
          "X-Request-Id": {
            "description": "The client's own X-Request-Id when it is 1 to 128 of [A-Za-z0-9._:-], else a new id",
            "required": true,
            "schema": {"type": "string", "pattern": "^[A-Za-z0-9._:-]{1,128}$"}
          }
        },
        "responses": {
          "SignedIn": {
            "description": "Signed in",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/TokenEnvelope"}}}
          },
          "User": {
            "description": "The user",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/UserEnvelope"}}}
          },
          "MfaRequired": {
            "description": "The user has a second factor: finish with POST /v1/auth/mfa/verify within 5 minutes",
            "content": {
              "application/json": {
                "schema": {
                  "type": "object",
                  "required": ["data"],
                  "properties": {
                    "data": {
                      "type": "object",
                      "required": ["mfa"],
                      "properties": {
                        "mfa": {
                          "type": "object",
                          "required": ["challenge_token", "expires_at", "methods"],
                          "properties": {
                            "challenge_token": {"type": "string"},
                            "expires_at": {"type": "string", "format": "date-time"},
                            "methods": {
                              "type": "array",
                              "items": {"enum": ["totp", "email", "sms", "backup_code"]}
                            }
                          }
                        }
                      }
                    }
                  }
                }
              }
            }
          },
          "BackupCodes": {
            "description": "Backup codes, shown this once",
            "content": {
              "application/json": {
                "schema": {
                  "type": "object",
                  "required": ["data"],
                  "properties": {
                    "data": {
                      "type": "object",
                      "required": ["backup_codes"],
                      "properties": {
                        "backup_codes": {
                          "type": "array",
                          "items": {"type": "string"},
                          "minItems": 10,
                          "maxItems": 10
                        }
                      }
                    }
                  }
                }
              }
            }
          },
          "Queued": {
            "description": "The mail is queued; its code lives this many seconds",
            "content": {
              "application/json": {
                "schema": {
                  "type": "object",
                  "required": ["data"],
                  "properties": {
                    "data": {
                      "type": "object",
                      "required": ["expires_in"],
                      "properties": {"expires_in": {"type": "integer"}}
                    }
                  }
                }
              }
            }
          },
          "PhoneCodeSent": {
            "description": "The code is on its way (or the SMS policy kept it back: the same answer); verify with this session id",
            "content": {
              "application/json": {
                "schema": {
                  "type": "object",
                  "required": ["data"],
                  "properties": {
                    "data": {
                      "type": "object",
                      "required": ["session_id", "expires_in"],
                      "properties": {"session_id": {"type": "string"}, "expires_in": {"type": "integer"}}
                    }
                  }
                }
              }
            }
          }
        },
        "schemas": {
          "TotpEnrolment": {
            "type": "object",
            "required": ["data"],
            "properties": {
              "data": {
                "type": "object",
                "required": ["secret", "otpauth_uri", "qr_svg"],
                "properties": {
                  "secret": {"type": "string", "description": "Base32, for typing in"},
                  "otpauth_uri": {"type": "string"},
                  "qr_svg": {"type": "string", "description": "The otpauth URI as a QR code (SVG document)"}
                }
              }
            }
          },
          "MfaStatus": {
            "type": "object",
            "required": ["data"],
            "properties": {
              "data": {
                "type": "object",
                "required": ["enabled", "methods", "backup_codes_remaining", "last_used_at", "enabled_at"],
                "properties": {
                  "enabled": {"type": "boolean"},
                  "methods": {"type": "array", "items": {"enum": ["totp", "email", "sms"]}},
                  "backup_codes_remaining": {"type": "integer"},
                  "last_used_at": {"type": ["string", "null"], "format": "date-time"},
                  "enabled_at": {"type": ["string", "null"], "format": "date-time"}
                }
              }
            }
          },
          "Passkey": {
            "type": "object",
            "required": [
              "id",
              "name",
              "credential_id",
              "transports",
              "aaguid",
              "backup_eligible",
              "backup_state",
              "created_at",
              "last_used_at"
            ],
            "properties": {
              "id": {"type": "string"},
              "name": {"type": "string"},
              "credential_id": {"type": "string"},
              "transports": {"type": "array", "items": {"type": "string"}},
              "aaguid": {"type": "string"},
              "backup_eligible": {"type": "boolean"},
              "backup_state": {"type": "boolean"},
              "created_at": {"type": "string", "format": "date-time"},
              "last_used_at": {"type": ["string", "null"], "format": "date-time"}
            }
          },
          "Device": {
            "type": "object",
            "required": ["id", "token", "platform", "kind", "device_name", "session_id", "created_at"],
            "properties": {
              "id": {"type": "string"},
              "token": {"type": "string"},
              "platform": {"enum": ["ios", "android", "web"]},
              "kind": {"enum": ["apns", "fcm", "voip"]},
              "device_name": {"type": ["string", "null"]},
              "session_id": {"type": "string"},
              "created_at": {"type": "string", "format": "date-time"}
            }
          },
          "Session": {
            "type": "object",
            "required": [
              "id",
              "current",
              "created_at",
              "last_seen_at",
              "expires_at",
              "ip",
              "user_agent",
              "amr",
              "mfa_verified"
            ],
            "properties": {
              "id": {"type": "string"},
              "current": {"type": "boolean"},
              "created_at": {"type": "string", "format": "date-time"},
              "last_seen_at": {"type": "string", "format": "date-time"},
              "expires_at": {"type": "string", "format": "date-time"},
              "ip": {"type": ["string", "null"]},
              "user_agent": {"type": ["string", "null"]},
              "amr": {"type": "array", "items": {"type": "string"}},
              "mfa_verified": {"type": "boolean"}
            }
          },
          "SessionList": {
            "type": "object",
            "required": ["data"],
            "properties": {"data": {"type": "array", "items": {"$ref": "#/components/schemas/Session"}}}
          },
          "User": {
            "type": "object",
            "required": [
              "uid",
              "email",
              "email_verified",
              "phone",
              "username",
              "first_name",
              "last_name",
              "photo_url",
              "is_guest",
              "has_password",
              "providers",
              "roles",
              "mfa_enabled",
              "created_at",
              "app_metadata",
              "user_metadata"
            ],
            "properties": {
              "uid": {"type": "string"},
              "email": {"type": ["string", "null"]},
              "email_verified": {"type": "boolean"},
              "phone": {"type": ["string", "null"]},
              "username": {"type": ["string", "null"]},
              "first_name": {"type": ["string", "null"]},
              "last_name": {"type": ["string", "null"]},
              "photo_url": {"type": ["string", "null"]},
              "is_guest": {"type": "boolean"},
              "has_password": {"type": "boolean"},
              "providers": {"type": "array", "items": {"type": "string"}},
              "roles": {"type": "array", "items": {"type": "string"}},
              "mfa_enabled": {"type": "boolean"},
              "created_at": {"type": "string", "format": "date-time"},
              "app_metadata": {"type": "object", "description": "Set by the app's backend (admin API) only"},
              "user_metadata": {
                "type": "object",
                "description": "Set by the user (PATCH /v1/me) or the app's backend"
              }
            }
          },
          "UserEnvelope": {
            "type": "object",
            "required": ["data"],
            "properties": {"data": {"$ref": "#/components/schemas/User"}}
          },
          "TokenEnvelope": {
            "type": "object",
            "required": ["data"],
            "properties": {
              "data": {
                "type": "object",
                "required": [
                  "access_token",
                  "token_type",
                  "expires_in",
                  "refresh_token",
                  "session_id",
                  "is_new_user",
                  "user"
                ],
                "properties": {
                  "access_token": {"type": "string"},
                  "token_type": {"const": "Bearer"},
                  "expires_in": {"type": "integer"},
                  "refresh_token": {"type": "string"},
                  "session_id": {"type": "string"},
                  "is_new_user": {"type": "boolean"},
                  "user": {"$ref": "#/components/schemas/User"},
                  "device_token": {
                    "type": "string",
                    "description": "Password sign-in only: this device's token, to send as X-Device-Token on its next sign-in (it replaces the one sent; 90 days)"
                  }
                }
              }
            }
          },
          "JWKSet": {
            "type": "object",
            "required": ["keys"],
            "properties": {
              "keys": {
                "type": "array",
                "items": {
                  "type": "object",
                  "required": ["kty", "use", "alg", "kid", "n", "e"],
                  "properties": {
                    "kty": {"const": "RSA"},
                    "use": {"const": "sig"},
                    "alg": {"type": "string"},
                    "kid": {"type": "string"},
                    "n": {"type": "string"},
                    "e": {"type": "string"}
                  }
                }
              }
            }
          },
          "OpenIDConfiguration": {
            "type": "object",
            "required": ["issuer", "jwks_uri", "id_token_signing_alg_values_supported"],
            "properties": {
              "issuer": {"type": "string"},
              "jwks_uri": {"type": "string"},
              "id_token_signing_alg_values_supported": {"type": "array", "items": {"type": "string"}}
            }
          },
          "Readiness": {
            "type": "object",
            "required": ["store", "broker"],
            "properties": {"store": {"enum": ["ok", "unreachable"]}, "broker": {"enum": ["ok", "unreachable"]}}
          },
          "Problem": {
            "type": "object",
            "required": ["type", "title", "status", "code", "detail", "request_id"],
            "properties": {
              "type": {"type": "string"},
              "title": {"type": "string"},
              "status": {"type": "integer"},
              "code": {
                "type": "string",
                "description": "Stable; clients match on it. Each answer lists the codes it may carry."
              },
              "detail": {"type": "string"},
              "request_id": {"type": "string"},
              "errors": {
                "type": "array",
                "items": {
                  "type": "object",
                  "required": ["location", "message"],
                  "properties": {"location": {"type": "string"}, "message": {"type": "string"}}
                }
              }
            }
          }
        }
      }
    }
    """#
}
