import Foundation
import IdentityKit

/// The admin API's part of the OpenAPI document: its operations' parts that proto/ does not say
/// (query parameters, the bodies its handlers read themselves, by operationId) and the schemas
/// those bodies use, merged into `OpenAPIDocument.baseJSON` to make `OpenAPIDocument.json` (what
/// the admin API answers is declared in proto/identity/answers/v1/admin.proto). Its operations use the
/// `secretKey` security scheme (declared SECRET_KEY): the app's secret key as a bearer token,
/// never a user's access token.
enum OpenAPIAdminDocument {
    static let operationParts = #"""
    {
      "adminListUsers": {
        "parameters": [
          {
            "name": "limit",
            "in": "query",
            "schema": {"type": "integer", "minimum": 1, "maximum": 100, "default": 50}
          },
          {
            "name": "cursor",
            "in": "query",
            "description": "next_cursor of the previous page",
            "schema": {"type": "string", "pattern": "^[0-9a-z]{26}$"}
          },
          {
            "name": "email",
            "in": "query",
            "description": "Email prefix, case-insensitive",
            "schema": {"type": "string", "minLength": 1, "maxLength": 254}
          },
          {
            "name": "phone",
            "in": "query",
            "description": "Phone prefix",
            "schema": {"type": "string", "minLength": 1, "maxLength": 32}
          },
          {
            "name": "username",
            "in": "query",
            "description": "Username prefix, case-insensitive",
            "schema": {"type": "string", "minLength": 1, "maxLength": 32}
          },
          {"name": "provider", "in": "query", "schema": {"enum": ["password", "apple", "google", "firebase"]}},
          {"name": "created_after", "in": "query", "schema": {"type": "string", "format": "date-time"}},
          {"name": "created_before", "in": "query", "schema": {"type": "string", "format": "date-time"}},
          {"name": "disabled", "in": "query", "schema": {"type": "boolean"}},
          {"name": "guest", "in": "query", "schema": {"type": "boolean"}}
        ]
      },
      "adminEndSession": {
        "parameters": [
          {"$ref": "#/components/parameters/Uid"},
          {"name": "session_id", "in": "path", "required": true, "schema": {"type": "string"}}
        ]
      },
      "introspectToken": {
        "requestBody": {
          "required": true,
          "content": {
            "application/x-www-form-urlencoded": {
              "example": {"token": "eyJhbGciOiJFUzI1NiIsImtpZCI6ImsxIn0.eyJzdWIiOiJ1c3JfMSJ9.c2lnbmF0dXJl", "token_type_hint": "access_token"},
              "schema": {
                "type": "object",
                "required": ["token"],
                "properties": {
                  "token": {"type": "string", "minLength": 1, "maxLength": 8192},
                  "token_type_hint": {"type": "string"},
                  "client_id": {"type": "string", "description": "client_secret_post: the app id"},
                  "client_secret": {"type": "string", "description": "client_secret_post: the app's secret key, instead of the Authorization header"}
                }
              }
            },
            "application/json": {
              "example": {"token": "eyJhbGciOiJFUzI1NiIsImtpZCI6ImsxIn0.eyJzdWIiOiJ1c3JfMSJ9.c2lnbmF0dXJl", "token_type_hint": "access_token"},
              "schema": {
                "type": "object",
                "required": ["token"],
                "properties": {
                  "token": {"type": "string", "minLength": 1, "maxLength": 8192},
                  "token_type_hint": {"type": ["string", "null"], "maxLength": 64}
                }
              }
            }
          }
        }
      },
      "revokeToken": {
        "description": "The token's session ends, as a sign-out ends it: its refresh tokens stop at once and its access tokens are refused by everything that checks the session (introspection, the API). The token_type_hint is not needed: the token says what it is.",
        "requestBody": {
          "required": true,
          "content": {
            "application/x-www-form-urlencoded": {
              "example": {"token": "rt_3q2-7wEAAAAbW9yZSByYW5kb20gYnl0ZXMgaGVyZQ", "token_type_hint": "refresh_token"},
              "schema": {
                "type": "object",
                "required": ["token"],
                "properties": {
                  "token": {"type": "string", "minLength": 1, "maxLength": 8192},
                  "token_type_hint": {"type": "string"},
                  "client_id": {"type": "string", "description": "client_secret_post: the app id"},
                  "client_secret": {"type": "string", "description": "client_secret_post: the app's secret key, instead of the Authorization header"}
                }
              }
            },
            "application/json": {
              "example": {"token": "rt_3q2-7wEAAAAbW9yZSByYW5kb20gYnl0ZXMgaGVyZQ", "token_type_hint": "refresh_token"},
              "schema": {
                "type": "object",
                "required": ["token"],
                "properties": {
                  "token": {"type": "string", "minLength": 1, "maxLength": 8192},
                  "token_type_hint": {"type": ["string", "null"], "maxLength": 64}
                }
              }
            }
          }
        }
      },
      "adminAuditLog": {
        "parameters": [
          {
            "name": "limit",
            "in": "query",
            "schema": {"type": "integer", "minimum": 1, "maximum": 200, "default": 50}
          },
          {
            "name": "cursor",
            "in": "query",
            "description": "next_cursor of the previous page",
            "schema": {"type": "string", "pattern": "^[1-9][0-9]{0,17}$"}
          },
          {
            "name": "actor",
            "in": "query",
            "description": "e.g. secret_key:skid_…",
            "schema": {"type": "string", "minLength": 1, "maxLength": 128}
          },
          {
            "name": "action",
            "in": "query",
            "description": "e.g. admin.users.disable",
            "schema": {"type": "string", "minLength": 1, "maxLength": 128}
          },
          {
            "name": "target",
            "in": "query",
            "description": "e.g. user:<uid>",
            "schema": {"type": "string", "minLength": 1, "maxLength": 128}
          },
          {"name": "since", "in": "query", "schema": {"type": "string", "format": "date-time"}},
          {"name": "until", "in": "query", "schema": {"type": "string", "format": "date-time"}}
        ]
      }
    }
    """#

    static let components = #"""
    {
      "securitySchemes": {
        "secretKey": {"type": "http", "scheme": "bearer", "bearerFormat": "sk_…",
                      "description": "The app's secret key (app backends only; never a user's access token). Rotate it with POST /v1/admin/secret-keys/rotate."},
        "secretKeyBasic": {"type": "http", "scheme": "basic",
                           "description": "Introspection and revocation (client_secret_basic, RFC 6749 §2.3.1): the app id as user name, the secret key as password. Or, without Authorization, the form fields client_id and client_secret (client_secret_post)."}
      },
      "parameters": {
        "Uid": {"name": "uid", "in": "path", "required": true, "schema": {"type": "string"}},
        "WebhookId": {"name": "webhook_id", "in": "path", "required": true, "schema": {"type": "string", "maxLength": 64}},
        "HookKind": {"name": "kind", "in": "path", "required": true,
                     "schema": {"type": "string", "enum": ["before_sign_up", "before_token", "send_email", "send_sms"]}}
      },
      "schemas": {
        "AppSettingsUpdate": {
          "type": "object", "description": "Only what is sent changes; null clears a text setting; a name that is no setting is refused (422 at body.NAME)",
          "examples": [{"access_token_ttl": 900, "google_client_ids": ["1234567890-abc.apps.googleusercontent.com"], "allowed_origins": ["https://app.example.com"], "rate_limits": {"sign_in_per_ip": "200/1m"}}],
          "properties": {
            "access_token_ttl": {"type": "integer", "minimum": 300, "maximum": 86400},
            "session_lifetime": {"type": "integer", "minimum": 3600, "maximum": 315360000},
            "session_idle_timeout": {"type": "integer", "minimum": 300, "maximum": 31536000, "description": "Seconds a session-object or single-token session may go unused before it ends (default 2592000, 30 days)"},
            "session_end_proof": {"type": "string", "enum": ["none", "fresh"], "description": "What ending another session of the user, or all of them, takes: none (default), or fresh, a sign-in within 5 minutes (auth/reauth-required otherwise); signing out of the caller's own session never needs it"},
            "google_client_ids": {"type": ["array", "null"], "maxItems": 20, "items": {"type": "string", "minLength": 1, "maxLength": 256, "pattern": "^[^,]*$"}},
            "apple_bundle_ids": {"type": ["array", "null"], "maxItems": 20, "items": {"type": "string", "minLength": 1, "maxLength": 256, "pattern": "^[^,]*$"}},
            "apple_services_ids": {"type": ["array", "null"], "maxItems": 20, "items": {"type": "string", "minLength": 1, "maxLength": 256, "pattern": "^[^,]*$"}},
            "apple_team_id": {"type": ["string", "null"], "maxLength": 256},
            "apple_key_id": {"type": ["string", "null"], "maxLength": 256},
            "apple_private_key": {"type": "string", "description": "The .p8 key (EC private key, PEM); stored sealed, never shown"},
            "firebase_project_id": {"type": ["string", "null"], "maxLength": 256},
            "firebase_trust_email_verified": {"type": "boolean"},
            "apns_team_id": {"type": ["string", "null"], "maxLength": 256},
            "apns_key_id": {"type": ["string", "null"], "maxLength": 256},
            "apns_topic": {"type": ["string", "null"], "maxLength": 256, "description": "The app's bundle id (apns-topic)"},
            "apns_private_key": {"type": "string", "description": "The APNs auth key (.p8, EC private key, PEM); stored sealed, never shown"},
            "fcm_service_account": {"type": "string", "description": "The FCM service-account key file (JSON text); stored sealed, never shown; sets fcm_project_id"},
            "security_alerts": {"type": "boolean", "default": true, "description": "Security alerts by email and push, on unless turned off: new-device sign-in, and every change of a way in (password, email, phone, passkey added or removed, provider linked or unlinked, MFA on or off, backup codes renewed or running low)"},
            "deep_link_url": {"type": ["string", "null"], "maxLength": 2048},
            "mail_from_name": {"type": ["string", "null"], "maxLength": 256},
            "mail_from_address": {"type": ["string", "null"], "format": "email"},
            "mail_templates": {"type": "object", "description": "KIND.PART or KIND.PART.LANGUAGE → text (KIND: \#(AppSettingsUpdate.templateKinds.joined(separator: ", ")); PART: subject, text, html, push_title, push_body, an SMS's only text; LANGUAGE: BCP 47, e.g. pt-BR). Without a language: the text of the app's default language. Placeholders: {{app_name}}, {{code}}, {{link}}, {{email}}; alerts also {{device}}, {{ip}}, {{time}}, {{provider}}", "additionalProperties": {"type": "string"}},
            "default_locale": {"type": ["string", "null"], "maxLength": 35, "description": "BCP 47: the language of messages to a user whose locale and Accept-Language have no texts; null: en"},
            "rate_limits": {"type": "object", "description": "Limit name → COUNT/WINDOW (e.g. 1000/1h), default, or off where the operator allows it; at most the operator's ceiling (by default 10 times the limit's default, in count and in rate)", "additionalProperties": {"type": "string"}},
            "default_metadata": {"type": "object", "properties": {"app_metadata": {"type": "object"}, "user_metadata": {"type": "object"}}, "additionalProperties": false},
            "profile": {"type": "string", "enum": ["standard", "single-token", "session-object"], "description": "The shape the app's shipped clients speak (docs/client-profiles.md)"},
            "domains": {"type": ["array", "null"], "maxItems": 20, "items": {"type": "string"}, "description": "Hosts (host or host:port) the app asks for; a new one is only requested (answered in domains_pending with the token to publish at https://HOST/.well-known/identity-domain-verification) and selects the app without X-App-Key once the operator verified it"},
            "path_prefix": {"type": ["string", "null"], "maxLength": 64, "description": "Answered as well as /v1 (e.g. /api/v2); null: /v1 only"},
            "allowed_origins": {"type": ["array", "null"], "maxItems": 50, "items": {"type": "string"}, "description": "Exact browser origins (scheme://host[:port]), no wildcard"},
            "apple_nonce": {"type": "string", "enum": ["issued", "client"]},
            "webauthn_rp_id": {"type": "string", "description": "The passkey relying party's domain"},
            "webauthn_rp_name": {"type": ["string", "null"], "maxLength": 256},
            "webauthn_origins": {"type": ["array", "null"], "maxItems": 20, "items": {"type": "string"}, "description": "https origins on the rp id or under it, or android:apk-key-hash:…"},
            "webauthn_require_uv": {"type": "boolean"},
            "jwks_cache_seconds": {"type": "integer", "minimum": 1, "maximum": 86400},
            "failed_sign_in_audit_threshold": {"type": "integer", "minimum": 1, "maximum": 1000, "description": "Failed sign-ins of one account or IP within 15 minutes that write a security.sign_in_failures audit row (and again at each doubling)"},
            "sms_allowed_calling_codes": {"type": ["array", "null"], "maxItems": 300, "items": {"type": "integer", "minimum": 1, "maximum": 999},
                                          "description": "Calling codes phone codes may be texted to (none until set: a fresh app sends no SMS); without an SMS account of the app's own, only the operator's shared account's codes"},
            "sms_breaker_hourly": {"type": "integer", "minimum": 1, "maximum": 10000000, "description": "Sends an hour, per lane (anonymous phone sign-in; linking and the SMS second factor), past which that lane's SMS stop for an hour (default 3000; at most the operator's ceiling, by default 30000)"},
            "sms_api_url": {"type": ["string", "null"], "maxLength": 2048, "description": "The app's Twilio-compatible API (default: the mailer's IDENTITY_SMS_API_URL)"},
            "sms_account_sid": {"type": ["string", "null"], "maxLength": 256},
            "sms_auth_token": {"type": ["string", "null"], "maxLength": 256, "description": "Stored sealed, never shown (sms_auth_token_set)"},
            "sms_from": {"type": ["string", "null"], "maxLength": 32, "description": "E.164 sender number or alphanumeric sender id"},
            "sms_messaging_service_sid": {"type": ["string", "null"], "maxLength": 256}
          },
          "additionalProperties": false
        },
        "Roles": {"type": "array", "maxItems": 50, "items": {"type": "string", "pattern": "^[A-Za-z0-9_.:-]{1,64}$"}},
        "CustomClaims": {"type": "object", "description": "Under 1 KiB as JSON; no reserved claim name (iss, sub, aud, exp, iat, jti, sid, amr, roles, email, …). In the next access token."}
      }
    }
    """#

    /// `base` with these paths and components added (each component kind merged by name).
    static func merged(into base: String) -> String {
        OpenAPIDocument.mergingComponents(components, into: base)
    }
}

extension OpenAPIDocument {
    /// The whole source document: the base and the admin API.
    static let json = OpenAPIImportKeysDocument.merged(into: OpenAPIAdminDocument.merged(into: baseJSON))

    /// Every operation's own part, by operationId (`rendered` adds it to the declared operation).
    static let allOperationParts: [String: JSONValue] = {
        var parts: [String: JSONValue] = [:]
        for text in [operationParts, OpenAPIAdminDocument.operationParts, OpenAPIImportKeysDocument.operationParts] {
            if case .object(let some)? = JSONValue.parse(Data(text.utf8), maximumBytes: 1 << 20) { parts.merge(some) { $1 } }
        }
        return parts
    }()

    /// `base` with `components` added, each kind merged by name.
    static func mergingComponents(_ components: String, into base: String) -> String {
        guard case .object(var document)? = JSONValue.parse(Data(base.utf8), maximumBytes: 1 << 20),
              case .object(var baseComponents)? = document["components"],
              case .object(let added)? = JSONValue.parse(Data(components.utf8), maximumBytes: 1 << 20)
        else { return base }
        for (kind, entries) in added {
            guard case .object(let new) = entries else { continue }
            var existing: [String: JSONValue] = [:]
            if case .object(let current)? = baseComponents[kind] { existing = current }
            existing.merge(new) { $1 }
            baseComponents[kind] = .object(existing)
        }
        document["components"] = .object(baseComponents)
        return JSONValue.object(document).serialized
    }
}
