/// Per operation of the API document, by operationId, only what a declaration in gateway.proto
/// cannot say: inline parameters and answers, or several success answers (the rest of the
/// operation, its request schema included, comes from the declaration; `OpenAPIDocument` holds
/// the document's prose and shared components).
extension OpenAPIDocument {
    /// What the declarations of the operations cannot say, by operationId.
    static let operationParts = #"""
    {
      "signIn": {
        "parameters": [
          {
            "name": "X-Device-Token",
            "in": "header",
            "required": false,
            "schema": {"type": "string"},
            "description": "The device_token of this device's last sign-in: once the identifier's sign-in budget is spent (sign_in_per_identifier), a live one is counted against this device's own (sign_in_per_device). A value that is not a device token (dt_…, 40 to 128 characters) is ignored, never refused: a device with a damaged token can still sign in"
          }
        ],
        "responses": {
          "200": {"$ref": "#/components/responses/SignedIn"},
          "202": {"$ref": "#/components/responses/MfaRequired"}
        }
      },
      "signOut": {"responses": {"204": {"description": "Signed out"}}},
      "signOutAll": {"responses": {"204": {"description": "Signed out everywhere"}}},
      "listSessions": {
        "responses": {
          "200": {
            "description": "Sessions",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/SessionList"}}}
          }
        }
      },
      "endSession": {
        "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}],
        "responses": {"204": {"description": "Ended"}}
      },
      "nonce": {
        "responses": {
          "200": {
            "description": "A nonce",
            "content": {
              "application/json": {
                "schema": {
                  "type": "object",
                  "required": ["data"],
                  "properties": {
                    "data": {
                      "type": "object",
                      "required": ["nonce", "expires_at"],
                      "properties": {
                        "nonce": {"type": "string"},
                        "expires_at": {"type": "string", "format": "date-time"}
                      }
                    }
                  }
                }
              }
            }
          }
        }
      },
      "signInWithApple": {
        "responses": {
          "200": {"$ref": "#/components/responses/SignedIn"},
          "202": {"$ref": "#/components/responses/MfaRequired"}
        }
      },
      "signInWithGoogle": {
        "responses": {
          "200": {"$ref": "#/components/responses/SignedIn"},
          "202": {"$ref": "#/components/responses/MfaRequired"}
        }
      },
      "signInWithIdToken": {
        "responses": {
          "200": {"$ref": "#/components/responses/SignedIn"},
          "202": {"$ref": "#/components/responses/MfaRequired"}
        }
      },
      "linkIdentity": {
        "parameters": [
          {"name": "provider", "in": "path", "required": true, "schema": {"enum": ["google", "apple"]}}
        ],
        "requestBody": {
          "required": true,
          "content": {
            "application/json": {
              "schema": {
                "allOf": [
                  {
                    "anyOf": [
                      {"$ref": "#/components/schemas/GoogleSignInRequest"},
                      {"$ref": "#/components/schemas/AppleSignInRequest"}
                    ]
                  },
                  {
                    "properties": {
                      "password": {
                        "type": ["string", "null"],
                        "maxLength": 1024,
                        "description": "Fresh proof when the sign-in is older than 5 minutes"
                      }
                    }
                  }
                ]
              }
            }
          }
        }
      },
      "unlinkIdentity": {
        "parameters": [
          {
            "name": "provider",
            "in": "path",
            "required": true,
            "schema": {"enum": ["google", "apple", "firebase"]}
          }
        ],
        "responses": {"204": {"description": "Unlinked"}}
      },
      "verifyEmailCode": {
        "responses": {
          "200": {"$ref": "#/components/responses/SignedIn"},
          "202": {"$ref": "#/components/responses/MfaRequired"}
        }
      },
      "verifyPhoneCode": {
        "responses": {
          "200": {"$ref": "#/components/responses/SignedIn"},
          "202": {"$ref": "#/components/responses/MfaRequired"}
        }
      },
      "mfaStatus": {
        "responses": {
          "200": {
            "description": "MFA status",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/MfaStatus"}}}
          }
        }
      },
      "disableMfa": {"responses": {"204": {"description": "MFA is off"}}},
      "startTotp": {
        "responses": {
          "200": {
            "description": "Enrolment started",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/TotpEnrolment"}}}
          }
        }
      },
      "checkPasswordCode": {
        "responses": {
          "200": {
            "description": "Whether the code is good",
            "content": {
              "application/json": {
                "schema": {
                  "type": "object",
                  "required": ["data"],
                  "properties": {
                    "data": {
                      "type": "object",
                      "required": ["valid"],
                      "properties": {"valid": {"type": "boolean"}}
                    }
                  }
                }
              }
            }
          }
        }
      },
      "resetPassword": {"responses": {"204": {"description": "Reset"}}},
      "changePassword": {"responses": {"204": {"description": "Changed"}}},
      "registerDevice": {
        "responses": {
          "201": {
            "description": "The device",
            "content": {
              "application/json": {
                "schema": {
                  "type": "object",
                  "required": ["data"],
                  "properties": {"data": {"$ref": "#/components/schemas/Device"}}
                }
              }
            }
          }
        }
      },
      "listDevices": {
        "responses": {
          "200": {
            "description": "Devices",
            "content": {
              "application/json": {
                "schema": {
                  "type": "object",
                  "required": ["data"],
                  "properties": {"data": {"type": "array", "items": {"$ref": "#/components/schemas/Device"}}}
                }
              }
            }
          }
        }
      },
      "passkeySignInOptions": {
        "responses": {
          "200": {
            "description": "Options for navigator.credentials.get (binary fields base64url)",
            "content": {
              "application/json": {
                "schema": {
                  "type": "object",
                  "required": ["data"],
                  "properties": {
                    "data": {
                      "type": "object",
                      "required": ["flow_id", "options", "has_passkeys"],
                      "properties": {
                        "flow_id": {"type": "string"},
                        "options": {"type": "object"},
                        "has_passkeys": {"type": "boolean"}
                      }
                    }
                  }
                }
              }
            }
          }
        }
      },
      "passkeyRegistrationOptions": {
        "responses": {
          "200": {
            "description": "Options for navigator.credentials.create (binary fields base64url)",
            "content": {
              "application/json": {
                "schema": {"type": "object", "required": ["data"], "properties": {"data": {"type": "object"}}}
              }
            }
          }
        }
      },
      "registerPasskey": {
        "responses": {
          "201": {
            "description": "The passkey",
            "content": {
              "application/json": {
                "schema": {
                  "type": "object",
                  "required": ["data"],
                  "properties": {"data": {"$ref": "#/components/schemas/Passkey"}}
                }
              }
            }
          }
        }
      },
      "listPasskeys": {
        "responses": {
          "200": {
            "description": "Passkeys",
            "content": {
              "application/json": {
                "schema": {
                  "type": "object",
                  "required": ["data"],
                  "properties": {"data": {"type": "array", "items": {"$ref": "#/components/schemas/Passkey"}}}
                }
              }
            }
          }
        }
      },
      "renamePasskey": {
        "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}],
        "responses": {
          "200": {
            "description": "The passkey",
            "content": {
              "application/json": {
                "schema": {
                  "type": "object",
                  "required": ["data"],
                  "properties": {"data": {"$ref": "#/components/schemas/Passkey"}}
                }
              }
            }
          }
        }
      },
      "deletePasskey": {
        "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}],
        "responses": {"204": {"description": "Removed"}}
      },
      "unregisterDevice": {
        "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}],
        "responses": {"204": {"description": "Unregistered"}}
      },
      "deleteMe": {"responses": {"204": {"description": "Deleted"}}},
      "jwks": {
        "responses": {
          "200": {
            "description": "JWK set",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/JWKSet"}}}
          }
        }
      },
      "openidConfiguration": {
        "responses": {
          "200": {
            "description": "Discovery document",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/OpenIDConfiguration"}}}
          }
        }
      }
    }
    """#
}
