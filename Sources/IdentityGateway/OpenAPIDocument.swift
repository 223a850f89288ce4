/// The OpenAPI 3.1 document served at `GET /api/docs/openapi.json`. It lists exactly the
/// routes of `Gateway.routes` (IdentityGatewayTests checks both ways), so add an endpoint here
/// in the same change that adds its route.
enum OpenAPIDocument {
    static let json = #"""
    {
      "openapi": "3.1.0",
      "info": {
        "title": "Identity service",
        "version": "1.0.0",
        "description": "Multi-tenant sign-in for mobile and web apps. Errors are RFC 9457 problem+json with a stable `code`."
      },
      "paths": {
        "/healthz": {
          "get": {"summary": "Liveness", "operationId": "healthz", "security": [],
                  "responses": {"200": {"description": "Alive"}}}
        },
        "/readyz": {
          "get": {"summary": "Readiness: store and broker reachable", "operationId": "readyz", "security": [],
                  "responses": {"200": {"description": "Ready"}, "503": {"description": "Store or broker unreachable"}}}
        },
        "/api/docs": {
          "get": {"summary": "This document as a page where every endpoint can be tried", "operationId": "docsPage",
                  "security": [], "responses": {"200": {"description": "HTML page"}}}
        },
        "/api/docs/openapi.json": {
          "get": {"summary": "This document", "operationId": "openapi", "security": [],
                  "responses": {"200": {"description": "OpenAPI 3.1 document"}}}
        },
        "/v1/auth/sign-up": {
          "post": {
            "summary": "Create an account with email and password",
            "operationId": "signUp",
            "security": [{"appKey": []}],
            "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/SignUpRequest"}}}},
            "responses": {
              "201": {"description": "Signed up and signed in", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/TokenEnvelope"}}}},
              "409": {"$ref": "#/components/responses/Problem"},
              "422": {"$ref": "#/components/responses/Problem"},
              "default": {"$ref": "#/components/responses/Problem"}
            }
          }
        },
        "/v1/auth/sign-in": {
          "post": {
            "summary": "Sign in with email or username and password",
            "operationId": "signIn",
            "security": [{"appKey": []}],
            "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/SignInRequest"}}}},
            "responses": {
              "200": {"description": "Signed in", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/TokenEnvelope"}}}},
              "401": {"$ref": "#/components/responses/Problem"},
              "default": {"$ref": "#/components/responses/Problem"}
            }
          }
        },
        "/v1/auth/token/refresh": {
          "post": {
            "summary": "Spend a refresh token for a new pair; a spent token within 30 s gets the same successor, later it ends the session",
            "operationId": "refreshToken",
            "security": [{"appKey": []}],
            "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/RefreshRequest"}}}},
            "responses": {
              "200": {"description": "A new token pair", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/TokenEnvelope"}}}},
              "401": {"$ref": "#/components/responses/Problem"},
              "default": {"$ref": "#/components/responses/Problem"}
            }
          }
        },
        "/v1/auth/sign-out": {
          "post": {
            "summary": "End this session",
            "operationId": "signOut",
            "security": [{"appKey": [], "bearer": []}],
            "responses": {"204": {"description": "Signed out"}, "401": {"$ref": "#/components/responses/Problem"}}
          }
        },
        "/v1/auth/sign-out-all": {
          "post": {
            "summary": "End every session of the user in this app",
            "operationId": "signOutAll",
            "security": [{"appKey": [], "bearer": []}],
            "responses": {"204": {"description": "Signed out everywhere"}, "401": {"$ref": "#/components/responses/Problem"}}
          }
        },
        "/v1/me/sessions": {
          "get": {
            "summary": "The user's live sessions, newest first",
            "operationId": "listSessions",
            "security": [{"appKey": [], "bearer": []}],
            "responses": {
              "200": {"description": "Sessions", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/SessionList"}}}},
              "401": {"$ref": "#/components/responses/Problem"}
            }
          }
        },
        "/v1/me/sessions/{id}": {
          "delete": {
            "summary": "End one of the user's sessions",
            "operationId": "endSession",
            "security": [{"appKey": [], "bearer": []}],
            "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}],
            "responses": {"204": {"description": "Ended"}, "404": {"$ref": "#/components/responses/Problem"}}
          }
        },
        "/v1/auth/nonce": {
          "get": {
            "summary": "A single-use nonce for Sign in with Apple (valid 5 minutes): give Apple its SHA-256, send it raw",
            "operationId": "nonce",
            "security": [{"appKey": []}],
            "responses": {"200": {"description": "{nonce, expires_at}"}, "401": {"$ref": "#/components/responses/Problem"}}
          }
        },
        "/v1/auth/apple": {
          "post": {
            "summary": "Sign in with Apple",
            "operationId": "signInWithApple",
            "security": [{"appKey": []}],
            "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/AppleSignInRequest"}}}},
            "responses": {
              "200": {"description": "Signed in", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/TokenEnvelope"}}}},
              "401": {"$ref": "#/components/responses/Problem"}, "409": {"$ref": "#/components/responses/Problem"},
              "422": {"$ref": "#/components/responses/Problem"}, "503": {"$ref": "#/components/responses/Problem"}
            }
          }
        },
        "/v1/auth/google": {
          "post": {
            "summary": "Sign in with a Google id token",
            "operationId": "signInWithGoogle",
            "security": [{"appKey": []}],
            "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/GoogleSignInRequest"}}}},
            "responses": {
              "200": {"description": "Signed in", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/TokenEnvelope"}}}},
              "401": {"$ref": "#/components/responses/Problem"}, "409": {"$ref": "#/components/responses/Problem"},
              "422": {"$ref": "#/components/responses/Problem"}, "503": {"$ref": "#/components/responses/Problem"}
            }
          }
        },
        "/v1/auth/id-token": {
          "post": {
            "summary": "Sign in with a Firebase id token",
            "operationId": "signInWithIdToken",
            "security": [{"appKey": []}],
            "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/IdTokenSignInRequest"}}}},
            "responses": {
              "200": {"description": "Signed in", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/TokenEnvelope"}}}},
              "401": {"$ref": "#/components/responses/Problem"}, "409": {"$ref": "#/components/responses/Problem"},
              "422": {"$ref": "#/components/responses/Problem"}, "503": {"$ref": "#/components/responses/Problem"}
            }
          }
        },
        "/v1/me/identities/{provider}": {
          "post": {
            "summary": "Link a Google or Apple identity to the signed-in user (body as the provider's sign-in)",
            "operationId": "linkIdentity",
            "security": [{"appKey": [], "bearer": []}],
            "parameters": [{"name": "provider", "in": "path", "required": true, "schema": {"enum": ["google", "apple"]}}],
            "requestBody": {"required": true, "content": {"application/json": {"schema": {"type": "object"}}}},
            "responses": {
              "200": {"description": "The user", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/UserEnvelope"}}}},
              "409": {"$ref": "#/components/responses/Problem"}, "401": {"$ref": "#/components/responses/Problem"}
            }
          },
          "delete": {
            "summary": "Unlink a provider (never the last way to sign in)",
            "operationId": "unlinkIdentity",
            "security": [{"appKey": [], "bearer": []}],
            "parameters": [{"name": "provider", "in": "path", "required": true, "schema": {"enum": ["google", "apple", "firebase"]}}],
            "responses": {"204": {"description": "Unlinked"}, "404": {"$ref": "#/components/responses/Problem"},
                          "409": {"$ref": "#/components/responses/Problem"}}
          }
        },
        "/v1/auth/email-code/send": {
          "post": {
            "summary": "Mail a 6-digit sign-in code (same answer whether or not the account exists)",
            "operationId": "sendEmailCode",
            "security": [{"appKey": []}],
            "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/EmailRequest"}}}},
            "responses": {"202": {"description": "Queued: {expires_in}"}, "422": {"$ref": "#/components/responses/Problem"}}
          }
        },
        "/v1/auth/email-code/verify": {
          "post": {
            "summary": "Sign in (or up) with a mailed code",
            "operationId": "verifyEmailCode",
            "security": [{"appKey": []}],
            "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/EmailCodeVerifyRequest"}}}},
            "responses": {"200": {"description": "Signed in", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/TokenEnvelope"}}}}, "401": {"$ref": "#/components/responses/Problem"}}
          }
        },
        "/v1/auth/password/forgot": {
          "post": {
            "summary": "Mail a password reset code (always 202)",
            "operationId": "forgotPassword",
            "security": [{"appKey": []}],
            "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/EmailRequest"}}}},
            "responses": {"202": {"description": "Queued: {expires_in}"}}
          }
        },
        "/v1/auth/password/verify-code": {
          "post": {
            "summary": "Check a reset code without spending it",
            "operationId": "checkPasswordCode",
            "security": [{"appKey": []}],
            "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/EmailAndCodeRequest"}}}},
            "responses": {"200": {"description": "{valid}"}}
          }
        },
        "/v1/auth/password/reset": {
          "post": {
            "summary": "Set a new password with a reset code; ends every session",
            "operationId": "resetPassword",
            "security": [{"appKey": []}],
            "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/PasswordResetRequest"}}}},
            "responses": {"204": {"description": "Reset"}, "401": {"$ref": "#/components/responses/Problem"}, "422": {"$ref": "#/components/responses/Problem"}}
          }
        },
        "/v1/me/password": {
          "post": {
            "summary": "Change the password; ends the other sessions",
            "operationId": "changePassword",
            "security": [{"appKey": [], "bearer": []}],
            "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/PasswordChangeRequest"}}}},
            "responses": {"204": {"description": "Changed"}, "401": {"$ref": "#/components/responses/Problem"}, "422": {"$ref": "#/components/responses/Problem"}}
          }
        },
        "/v1/me/email/verification": {
          "post": {
            "summary": "Mail an email-verification code (at most once a minute)",
            "operationId": "sendEmailVerification",
            "security": [{"appKey": [], "bearer": []}],
            "responses": {"202": {"description": "Queued: {expires_in}"}, "429": {"$ref": "#/components/responses/Problem"}}
          }
        },
        "/v1/auth/email/verify": {
          "post": {
            "summary": "Verify the email with its code",
            "operationId": "verifyEmail",
            "security": [{"appKey": []}],
            "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/EmailAndCodeRequest"}}}},
            "responses": {"200": {"description": "The user", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/UserEnvelope"}}}}, "401": {"$ref": "#/components/responses/Problem"}}
          }
        },
        "/v1/auth/guest": {
          "post": {
            "summary": "Sign in as a guest: the same secret always returns the same guest",
            "operationId": "guestSignIn",
            "security": [{"appKey": []}],
            "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/GuestRequest"}}}},
            "responses": {
              "200": {"description": "Signed in", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/TokenEnvelope"}}}},
              "422": {"$ref": "#/components/responses/Problem"}
            }
          }
        },
        "/v1/me/devices": {
          "post": {
            "summary": "Register this session's push device (a known token moves here)",
            "operationId": "registerDevice",
            "security": [{"appKey": [], "bearer": []}],
            "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/DeviceRequest"}}}},
            "responses": {"201": {"description": "The device"}, "422": {"$ref": "#/components/responses/Problem"}}
          },
          "get": {
            "summary": "The user's push devices",
            "operationId": "listDevices",
            "security": [{"appKey": [], "bearer": []}],
            "responses": {"200": {"description": "Devices"}, "401": {"$ref": "#/components/responses/Problem"}}
          }
        },
        "/v1/me/devices/{id}": {
          "delete": {
            "summary": "Unregister a push device",
            "operationId": "unregisterDevice",
            "security": [{"appKey": [], "bearer": []}],
            "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}],
            "responses": {"204": {"description": "Unregistered"}, "404": {"$ref": "#/components/responses/Problem"}}
          }
        },
        "/v1/me": {
          "get": {
            "summary": "The signed-in user",
            "operationId": "getMe",
            "security": [{"appKey": [], "bearer": []}],
            "responses": {
              "200": {"description": "The user", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/UserEnvelope"}}}},
              "401": {"$ref": "#/components/responses/Problem"}
            }
          },
          "delete": {
            "summary": "Delete the account and all its data, given fresh proof: {password}, a guest's {secret}, Apple {identity_token, authorization_code, nonce} or Google {id_token}",
            "operationId": "deleteMe",
            "security": [{"appKey": [], "bearer": []}],
            "requestBody": {"required": false, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/DeletionProof"}}}},
            "responses": {"204": {"description": "Deleted"}, "403": {"$ref": "#/components/responses/Problem"}}
          },
          "patch": {
            "summary": "Change the profile; a field sent as null is cleared",
            "operationId": "updateMe",
            "security": [{"appKey": [], "bearer": []}],
            "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/UpdateMeRequest"}}}},
            "responses": {
              "200": {"description": "The updated user", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/UserEnvelope"}}}},
              "409": {"$ref": "#/components/responses/Problem"},
              "422": {"$ref": "#/components/responses/Problem"},
              "default": {"$ref": "#/components/responses/Problem"}
            }
          }
        },
        "/v1/apps/{app_id}/jwks.json": {
          "get": {
            "summary": "The app's public signing keys",
            "operationId": "jwks",
            "security": [],
            "parameters": [{"$ref": "#/components/parameters/AppId"}],
            "responses": {"200": {"description": "JWK set"}, "404": {"$ref": "#/components/responses/Problem"}}
          }
        },
        "/v1/apps/{app_id}/.well-known/openid-configuration": {
          "get": {
            "summary": "The app's OpenID configuration",
            "operationId": "openidConfiguration",
            "security": [],
            "parameters": [{"$ref": "#/components/parameters/AppId"}],
            "responses": {"200": {"description": "Discovery document"}, "404": {"$ref": "#/components/responses/Problem"}}
          }
        }
      },
      "components": {
        "securitySchemes": {
          "appKey": {"type": "apiKey", "in": "header", "name": "X-App-Key"},
          "bearer": {"type": "http", "scheme": "bearer", "bearerFormat": "JWT"}
        },
        "parameters": {
          "AppId": {"name": "app_id", "in": "path", "required": true, "schema": {"type": "string"}}
        },
        "responses": {
          "Problem": {"description": "An error", "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}}
        },
        "schemas": {
          "SignUpRequest": {
            "type": "object", "required": ["email", "password"],
            "properties": {
              "email": {"type": "string", "format": "email"},
              "password": {"type": "string", "minLength": 8, "maxLength": 256},
              "first_name": {"type": ["string", "null"], "maxLength": 100},
              "last_name": {"type": ["string", "null"], "maxLength": 100},
              "username": {"type": ["string", "null"], "pattern": "^[A-Za-z0-9_.]{3,32}$"}
            }
          },
          "SignInRequest": {
            "type": "object", "required": ["password"],
            "properties": {
              "email": {"type": "string"},
              "identifier": {"type": "string", "description": "An email or a username"},
              "password": {"type": "string"}
            }
          },
          "AppleSignInRequest": {
            "type": "object", "required": ["identity_token", "nonce"],
            "properties": {
              "identity_token": {"type": "string"}, "nonce": {"type": "string", "description": "The raw nonce from GET /v1/auth/nonce"},
              "authorization_code": {"type": "string"}, "first_name": {"type": "string"}, "last_name": {"type": "string"}
            }
          },
          "GoogleSignInRequest": {
            "type": "object", "required": ["id_token"],
            "properties": {"id_token": {"type": "string"}, "nonce": {"type": "string"}}
          },
          "IdTokenSignInRequest": {
            "type": "object", "required": ["provider", "id_token"],
            "properties": {"provider": {"const": "firebase"}, "id_token": {"type": "string"}}
          },
          "EmailRequest": {"type": "object", "required": ["email"], "properties": {"email": {"type": "string", "format": "email"}}},
          "EmailAndCodeRequest": {
            "type": "object", "required": ["email", "code"],
            "properties": {"email": {"type": "string", "format": "email"}, "code": {"type": "string", "pattern": "^[0-9]{6}$"}}
          },
          "EmailCodeVerifyRequest": {
            "type": "object", "required": ["email", "code"],
            "properties": {"email": {"type": "string"}, "code": {"type": "string"}, "first_name": {"type": "string"}, "last_name": {"type": "string"}}
          },
          "PasswordResetRequest": {
            "type": "object", "required": ["email", "code", "password"],
            "properties": {"email": {"type": "string"}, "code": {"type": "string"}, "password": {"type": "string", "minLength": 8, "maxLength": 256}}
          },
          "PasswordChangeRequest": {
            "type": "object", "required": ["current_password", "new_password"],
            "properties": {"current_password": {"type": "string"}, "new_password": {"type": "string", "minLength": 8, "maxLength": 256}}
          },
          "GuestRequest": {
            "type": "object", "required": ["secret"],
            "properties": {"secret": {"type": "string", "minLength": 32, "maxLength": 256, "description": "256 random bits, base64url (43 characters), made once by the client"}}
          },
          "DeviceRequest": {
            "type": "object", "required": ["token", "platform", "kind"],
            "properties": {"token": {"type": "string"}, "platform": {"enum": ["ios", "android", "web"]},
                           "kind": {"enum": ["apns", "fcm", "voip"]}, "device_name": {"type": "string"}}
          },
          "DeletionProof": {
            "type": "object",
            "properties": {"password": {"type": "string"}, "secret": {"type": "string"}, "identity_token": {"type": "string"},
                           "authorization_code": {"type": "string"}, "nonce": {"type": "string"}, "id_token": {"type": "string"}}
          },
          "RefreshRequest": {
            "type": "object", "required": ["refresh_token"],
            "properties": {"refresh_token": {"type": "string"}}
          },
          "Session": {
            "type": "object",
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
          "SessionList": {"type": "object", "properties": {"data": {"type": "array", "items": {"$ref": "#/components/schemas/Session"}}}},
          "UpdateMeRequest": {
            "type": "object",
            "properties": {
              "first_name": {"type": ["string", "null"], "maxLength": 100},
              "last_name": {"type": ["string", "null"], "maxLength": 100},
              "photo_url": {"type": ["string", "null"], "format": "uri"},
              "username": {"type": ["string", "null"], "pattern": "^[A-Za-z0-9_.]{3,32}$"}
            }
          },
          "User": {
            "type": "object",
            "required": ["uid", "email", "email_verified", "phone", "username", "first_name", "last_name", "photo_url",
                         "is_guest", "has_password", "providers", "roles", "mfa_enabled", "created_at"],
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
              "created_at": {"type": "string", "format": "date-time"}
            }
          },
          "UserEnvelope": {"type": "object", "properties": {"data": {"$ref": "#/components/schemas/User"}}},
          "TokenEnvelope": {
            "type": "object",
            "properties": {"data": {
              "type": "object",
              "properties": {
                "access_token": {"type": "string"},
                "token_type": {"const": "Bearer"},
                "expires_in": {"type": "integer"},
                "refresh_token": {"type": "string"},
                "session_id": {"type": "string"},
                "is_new_user": {"type": "boolean"},
                "user": {"$ref": "#/components/schemas/User"}
              }
            }}
          },
          "Problem": {
            "type": "object",
            "required": ["type", "title", "status", "code", "request_id"],
            "properties": {
              "type": {"type": "string"},
              "title": {"type": "string"},
              "status": {"type": "integer"},
              "code": {"type": "string", "examples": ["auth/invalid-credential"]},
              "detail": {"type": "string"},
              "request_id": {"type": "string"},
              "errors": {"type": "array", "items": {"type": "object", "properties": {
                "location": {"type": "string"}, "message": {"type": "string"}}}}
            }
          }
        }
      }
    }
    """#
}
