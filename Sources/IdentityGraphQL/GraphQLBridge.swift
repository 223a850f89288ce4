import GraphQL
import IdentityBasics

/// JSON of the core ↔ GraphQL values, and the core's objects in the guide's shapes.
public enum GraphQLBridge {
    public static func value(_ json: JSONValue) -> GraphQLValue {
        switch json {
        case .null: .null
        case .bool(let flag): .bool(flag)
        case .number(let number): number == number.rounded() && abs(number) < 9e15 ? .int(Int(number)) : .float(number)
        case .string(let text): .string(text)
        case .array(let items): .list(items.map(value))
        case .object(let members): .object(members.sorted { $0.key < $1.key }.map { ($0.key, value($0.value)) })
        }
    }

    public static func json(_ value: GraphQLValue) -> JSONValue {
        switch value {
        case .null: .null
        case .bool(let flag): .bool(flag)
        case .int(let number): .number(Double(number))
        case .float(let number): .number(number)
        case .string(let text): .string(text)
        case .list(let items): .array(items.map(json))
        case .object(let pairs): .object(Dictionary(pairs.map { ($0.0, json($0.1)) }, uniquingKeysWith: { _, last in last }))
        }
    }

    /// The core's user (docs/api-contract.md, "Tokens and sessions") as the guide's `User`; the
    /// profile fields the core has no column for come from `user_metadata`.
    public static func user(_ core: JSONValue) -> GraphQLValue {
        func field(_ key: String) -> GraphQLValue { value(core[key] ?? .null) }
        let metadata = core["user_metadata"] ?? .object([:])
        let names = [core["first_name"], core["last_name"]].compactMap { item -> String? in
            if case .string(let text)? = item, !text.isEmpty { return text }
            return nil
        }
        return .object([
            ("id", field("uid")), ("username", field("username")), ("email", field("email")),
            ("isEmailVerified", field("email_verified")), ("firstName", field("first_name")), ("lastName", field("last_name")),
            ("displayName", names.isEmpty ? .null : .string(names.joined(separator: " "))), ("photoURL", field("photo_url")),
            ("isGuest", field("is_guest")), ("hasPassword", field("has_password")), ("twoFactorEnabled", field("mfa_enabled")),
            ("createdAt", field("created_at")),
            ("bio", value(metadata["bio"] ?? .null)), ("dateOfBirth", value(metadata["dateOfBirth"] ?? .null)),
            ("gender", value(metadata["gender"] ?? .null)), ("accountType", value(metadata["accountType"] ?? .null)),
        ])
    }
}
