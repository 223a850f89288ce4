import Foundation
import IdentityKit

/// Field rules of the admin API's user bodies, shared by create and update.
enum AdminFields {
    /// Metadata objects are bounded like claims, only larger.
    static let maximumMetadataBytes = 8 * 1024

    /// E.164: `+`, a non-zero digit, 6 to 14 more digits.
    static func phone(_ value: String) -> String? {
        let digits = value.utf8.dropFirst()
        let ok = value.hasPrefix("+") && (7...15).contains(digits.count) && digits.first != 48
            && digits.allSatisfy { $0 >= 48 && $0 <= 57 }
        return ok ? nil : "must be an E.164 number such as +14155550123"
    }

    static func email(_ value: String) -> String? {
        EmailAddress.isValid(value) ? nil : "must be a valid email address"
    }

    /// `roles`: at most 50 names of 1 to 64 of `[A-Za-z0-9_.:-]`, each once.
    static func roles(_ key: String, _ body: inout BodyReader) -> [String]? {
        guard let value = body.value(key), value != .null else { return nil }
        guard case .array(let items) = value, items.count <= 50 else {
            body.add(.init(location: "body.\(key)", message: "must be a list of at most 50 role names"))
            return nil
        }
        var roles: [String] = []
        for (index, item) in items.enumerated() {
            guard case .string(let role) = item, (1...64).contains(role.utf8.count), role.utf8.allSatisfy({
                ($0 >= 48 && $0 <= 58) || ($0 >= 65 && $0 <= 90) || ($0 >= 97 && $0 <= 122) || $0 == 95 || $0 == 46 || $0 == 45
            }) else {
                body.add(.init(location: "body.\(key)[\(index)]", message: "must be 1 to 64 of A-Z a-z 0-9 _ . : -"))
                continue
            }
            if !roles.contains(role) { roles.append(role) }
        }
        return roles
    }

    /// PostgreSQL's jsonb refuses U+0000 anywhere (keys and strings): refused here as a 422,
    /// as every body string with NUL is, rather than failing in the store.
    static func containsNUL(_ value: JSONValue) -> Bool {
        switch value {
        case .string(let text): return text.utf8.contains(0)
        case .array(let items): return items.contains(where: containsNUL)
        case .object(let fields): return fields.contains { $0.key.utf8.contains(0) || containsNUL($0.value) }
        default: return false
        }
    }

    /// `custom_claims`: compact JSON text, or nil when absent (null clears: `{}`).
    static func customClaims(_ key: String, _ body: inout BodyReader) -> String? {
        guard let value = body.value(key) else { return nil }
        if value == .null { return "{}" }
        if containsNUL(value) {
            body.add(.init(location: "body.\(key)", message: "must not contain NUL characters"))
            return nil
        }
        if let problem = CustomClaims.problem(value) {
            body.add(.init(location: "body.\(key)", message: problem))
            return nil
        }
        return value.serialized
    }

    /// `app_metadata` / `user_metadata`: a JSON object up to 8 KiB as compact text; null clears.
    static func metadata(_ key: String, _ body: inout BodyReader) -> String? {
        guard let value = body.value(key) else { return nil }
        if value == .null { return "{}" }
        guard case .object = value else {
            body.add(.init(location: "body.\(key)", message: "must be a JSON object"))
            return nil
        }
        if containsNUL(value) {
            body.add(.init(location: "body.\(key)", message: "must not contain NUL characters"))
            return nil
        }
        let text = value.serialized
        guard text.utf8.count <= maximumMetadataBytes else {
            body.add(.init(location: "body.\(key)", message: "must be at most \(maximumMetadataBytes) bytes as JSON"))
            return nil
        }
        return text
    }
}
