/// Per operation of the API document, by operationId, only what a declaration in gateway.proto
/// cannot say: a header parameter, the values a path parameter takes, a body that is one of two
/// shapes (the rest of the operation, its request schema and answers included, comes from the
/// declaration; `OpenAPIDocument` holds the document's prose and shared components).
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
        ]
      },
      "linkIdentity": {
        "parameters": [
          {"name": "provider", "in": "path", "required": true, "schema": {"enum": ["google", "apple"]}}
        ],
        "requestBody": {
          "required": true,
          "content": {
            "application/json": {
              "example": {"id_token": "eyJhbGciOiJSUzI1NiIsImtpZCI6ImExIn0.eyJpc3MiOiJodHRwczovL2FjY291bnRzLmdvb2dsZS5jb20ifQ.c2lnbmF0dXJl", "password": "tangerine-ladder-1843"},
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
        ]
      }
    }
    """#
}
