import Foundation
import IdentityKit

/// The OpenAPI parts of user import that proto/ does not say (the body its handler reads
/// itself) and its components, merged into the document after the rest of the admin API
/// (`OpenAPIDocument.json`).
enum OpenAPIImportKeysDocument {
    static let operationParts = #"""
    {
      "adminImportUsers": {
        "requestBody": {
          "required": true,
          "content": {
            "application/json": {
              "example": {
                "users": [
                  {"uid": "legacy-1842", "email": "ada@example.com", "email_verified": true, "first_name": "Ada",
                   "password_hash": {"algorithm": "bcrypt", "hash": "$2b$12$C6UzMDM.H6dfI/f/IKcEeO5oN2JZKXc1c5Tw6pwbZ5Ww9lJZ2sTWe"}},
                  {"email": "grace@example.com", "providers": [{"provider": "google", "subject": "109876543210987654321", "email": "grace@example.com"}]}
                ]
              },
              "schema": {
                "type": "object",
                "required": ["users"],
                "additionalProperties": false,
                "properties": {
                  "users": {
                    "type": "array",
                    "minItems": 1,
                    "maxItems": 1000,
                    "items": {"$ref": "#/components/schemas/ImportedUser"}
                  },
                  "allow_weak_hashes": {
                    "type": "boolean",
                    "default": false,
                    "description": "Import password hashes below the floor too (bcrypt cost < 10, PBKDF2 < 100000 iterations, scrypt below N=2^14 r=8, Argon2 below m=7168 KiB or m·t < 35840, Firebase scrypt below memory_cost 13 rounds 8); without it such a user is refused with import/weak-hash"
                  }
                }
              }
            }
          }
        }
      }
    }
    """#

    static let components = #"""
    {
      "schemas": {
        "ImportedUser": {
          "type": "object",
          "description": "docs/flows.md, Importing users. At least one of email, username, phone or providers. Only the JSON types below are checked for the whole call (422); everything else (lengths, an email's form, password_hash: {algorithm: bcrypt | scrypt | firebase_scrypt | pbkdf2_sha256 | pbkdf2_sha1 | argon2id | argon2i, hash, salt, n, r, p, iterations, salt_separator, signer_key, rounds, memory_cost}, providers: at most 3 of {provider: apple | google | firebase, subject, email}) is checked per user and reported in errors[] by index, with the call answering 200.",
          "properties": {
            "uid": {"type": "string"}, "email": {"type": "string"},
            "email_verified": {"type": "boolean"}, "phone": {"type": "string"}, "username": {"type": "string"},
            "first_name": {"type": "string"}, "last_name": {"type": "string"}, "photo_url": {"type": "string"},
            "password_hash": {"type": "object"},
            "providers": {"type": "array", "items": {"type": "object"}}
          }
        }
      }
    }
    """#

    /// `base` with these paths and component schemas added.
    static func merged(into base: String) -> String {
        OpenAPIDocument.mergingComponents(components, into: base)
    }
}
