import Foundation

/// A user's custom claims (admin API): a JSON object under 1 KiB whose names are not among the
/// claims this service sets or that JWT/OIDC give a meaning to, put into the user's access
/// tokens from the next one issued (sign-in or refresh).
public enum CustomClaims {
    public static let maximumBytes = 1024

    /// Names a custom claim may not take: the service's own and the registered JWT/OIDC claims.
    public static let reserved: Set<String> = [
        "iss", "sub", "aud", "exp", "nbf", "iat", "jti", "sid", "amr", "acr", "aal", "azp", "auth_time", "nonce",
        "at_hash", "c_hash", "s_hash", "cnf", "scope", "scp", "client_id", "token_type", "typ", "kid", "alg",
        "is_guest", "email", "email_verified", "phone_number", "phone_number_verified", "roles", "act", "may_act",
        "events", "sub_jwk", "tenant", "app_id", "uid", "mfa",
    ]

    /// Why `value` cannot be custom claims, or nil: an object, compact text under 1 KiB, no
    /// reserved or empty name.
    public static func problem(_ value: JSONValue) -> String? {
        guard case .object(let object) = value else { return "must be a JSON object" }
        if let name = object.keys.sorted().first(where: { reserved.contains($0) || $0.isEmpty }) {
            return name.isEmpty ? "must not have an empty claim name" : "must not use the reserved claim name \(name)"
        }
        guard value.serialized.utf8.count < maximumBytes else { return "must be under \(maximumBytes) bytes as JSON" }
        return nil
    }

    /// The claims kept as text (a user row, a command), parsed; {} when empty or not an object.
    public static func parse(_ text: String) -> [String: JSONValue] {
        guard !text.isEmpty, case .object(let object)? = JSONValue.parse(Data(text.utf8)) else { return [:] }
        return object
    }

    struct Key: CodingKey {
        let stringValue: String
        init(_ name: String) { stringValue = name }
        init?(stringValue: String) { self.stringValue = stringValue }
        var intValue: Int? { nil }
        init?(intValue: Int) { nil }
    }

    /// A JSON value written through `Encoder` (the JWT's payload is made by `JSONEncoder`).
    struct Encoded: Encodable {
        let value: JSONValue
        init(_ value: JSONValue) { self.value = value }

        func encode(to encoder: Encoder) throws {
            switch value {
            case .null:
                var container = encoder.singleValueContainer()
                try container.encodeNil()
            case .bool(let flag):
                var container = encoder.singleValueContainer()
                try container.encode(flag)
            case .number(let number):
                var container = encoder.singleValueContainer()
                if number.rounded() == number, abs(number) < 9.0e15 { try container.encode(Int64(number)) } else {
                    try container.encode(number)
                }
            case .string(let text):
                var container = encoder.singleValueContainer()
                try container.encode(text)
            case .array(let items):
                var container = encoder.unkeyedContainer()
                for item in items { try container.encode(Encoded(item)) }
            case .object(let fields):
                var container = encoder.container(keyedBy: Key.self)
                for (name, item) in fields { try container.encode(Encoded(item), forKey: Key(name)) }
            }
        }
    }
}

/// The worker's check of claims that arrive as text in a command (the gateway checked them first).
public enum AdminClaims {
    public static func check(_ text: String, location: String) throws {
        guard !text.isEmpty else { return }
        guard let value = JSONValue.parse(Data(text.utf8)) else {
            throw ServiceError.validationFailed([.init(location: location, message: "must be a JSON object")])
        }
        if let problem = CustomClaims.problem(value) {
            throw ServiceError.validationFailed([.init(location: location, message: problem)])
        }
    }
}
