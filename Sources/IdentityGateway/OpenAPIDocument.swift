/// The OpenAPI 3.1 document served at `GET /api/docs/openapi.json`, before rendering
/// (`OpenAPIRendering.swift`). Each API operation's path, method, operationId, tag, security,
/// summary, parameters, request and answers come from its declaration in
/// proto/identity/gateway/v1/gateway.proto, and the schemas of what it answers from the shapes of
/// proto/identity/answers/v1/answers.proto; this file keeps the prose of the document, the
/// service's own routes (health, documents, GraphQL), the parts every answer shares (security
/// schemes, headers, problem+json), and per operation (`operationParts`, by operationId) only what
/// a declaration cannot say.
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
      "servers": [{"url": "/", "description": "This gateway: the origin that serves this document"}],
      "tags": [
        {"name": "GraphQL", "description": "The same operations as one GraphQL endpoint: each field sends the REST route's own request, with its rules and limits."},
        {"name": "Service", "description": "Health, readiness and this documentation: no app and no credentials."}
      ],
      "paths": {
        "/healthz": {
          "get": {
            "summary": "Liveness",
            "description": "Answers 200 while the gateway process runs; it reads nothing else. For a load balancer's liveness probe (restart when it fails).",
            "operationId": "healthz",
            "tags": ["Service"],
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
            "description": "200 when PostgreSQL answers and the broker connection is up, else 503 saying which is unreachable. For a load balancer's readiness probe (send no traffic while it fails).",
            "operationId": "readyz",
            "tags": ["Service"],
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
            "description": "Send `{query, variables, operationName}` with `X-App-Key` (and a user's bearer token for the signed-in fields). A field's error is in `errors[]` with `extensions.code` from the error catalogue below, and the answer is still HTTP 200; only a request that is not GraphQL at all (no app, bad JSON) is a problem+json.",
            "operationId": "graphql",
            "tags": ["GraphQL"],
            "security": [{"appKey": []}],
            "requestBody": {
              "required": true,
              "content": {
                "application/json": {
                  "example": {
                    "query": "mutation Login($input: UserLoginInput!) { login(input: $input) { user { id username } token } }",
                    "variables": {"input": {"identifier": "ada@example.com", "password": "tangerine-ladder-1843"}},
                    "operationName": "Login"
                  },
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
            "description": "For queries only (a mutation is refused, so a link cannot change state). A browser without `query` gets a page to try queries; `?sdl` prints the schema for code generators.",
            "operationId": "graphqlGet",
            "tags": ["GraphQL"],
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
            "description": "The API reference: operations by tag with their fields, answers and error codes, search, and a form that sends each one with an app key and the token of the last sign-in. Every problem's `type` links to its code's section here (`/api/docs#error-<code>`).",
            "operationId": "docsPage",
            "tags": ["Service"],
            "security": [],
            "responses": {
              "200": {"description": "HTML page", "content": {"text/html": {"schema": {"type": "string"}}}}
            }
          }
        },
        "/api/docs/reference.js": {
          "get": {
            "summary": "The reference page's script",
            "description": "Renders this document on `/api/docs`; the page's Content-Security-Policy allows only this origin's own script.",
            "operationId": "docsScript",
            "tags": ["Service"],
            "security": [],
            "responses": {
              "200": {"description": "JavaScript", "content": {"text/javascript": {"schema": {"type": "string"}}}}
            }
          }
        },
        "/api/docs/reference.css": {
          "get": {
            "summary": "The reference page's stylesheet",
            "description": "Styles `/api/docs`; served by the gateway itself like the page, so the page works without any other host.",
            "operationId": "docsStylesheet",
            "tags": ["Service"],
            "security": [],
            "responses": {
              "200": {"description": "CSS", "content": {"text/css": {"schema": {"type": "string"}}}}
            }
          }
        },
        "/api/docs/openapi.json": {
          "get": {
            "summary": "This document",
            "description": "The OpenAPI 3.1 document of the standard client profile: every operation, its request and answers, and per status the error codes it may answer (`x-error-codes`); `x-error-catalogue` lists every code once with its meaning.",
            "operationId": "openapi",
            "tags": ["Service"],
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
            "description": "An app whose client profile is session-object sees its routes answer as this document says; the rest of the API is as in `/api/docs/openapi.json`.",
            "operationId": "sessionObjectOpenapi",
            "tags": ["Service"],
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
            "description": "An app whose client profile is single-token sees its routes answer as this document says; the rest of the API is as in `/api/docs/openapi.json`.",
            "operationId": "singleTokenOpenapi",
            "tags": ["Service"],
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
        "responses": {},
        "schemas": {
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
