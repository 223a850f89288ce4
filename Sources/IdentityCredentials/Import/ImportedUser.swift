import Foundation
import IdentityKit

/// One user of an import (a JSON object: one line of a `.jsonl` file, or one element of the
/// admin API's `users` array), validated before anything is written:
///
///     {"uid": "…" (optional, kept as the user's id), "email": "…", "email_verified": true,
///      "phone": "+15551234567", "username": "…", "first_name": "…", "last_name": "…",
///      "photo_url": "https://…",
///      "password_hash": {"algorithm": "bcrypt", "hash": "$2b$12$…"},
///      "providers": [{"provider": "google", "subject": "1234", "email": "…"}]}
///
/// `password_hash.algorithm` is one of `bcrypt` (`hash`: the `$2a$/$2b$/$2y$` string),
/// `argon2id`/`argon2i` (`hash`: the PHC string), `scrypt` (`hash`, `salt` in base64, `n`,
/// `r`, `p`), `firebase_scrypt` (`hash`, `salt`, `salt_separator`, `signer_key` in base64 as
/// Firebase exports them, `rounds`, `memory_cost`), `pbkdf2_sha256`/`pbkdf2_sha1` (`hash`,
/// `salt` in base64, `iterations`). Unknown fields are refused rather than dropped.
public struct ImportedUser: Sendable, Equatable {
    public var uid: String?
    public var email: String?
    public var emailVerified = false
    public var phone: String?
    public var username: String?
    public var firstName: String?
    public var lastName: String?
    public var photoURL: String?
    public var passwordHash: ImportedPasswordHash?
    public var providers: [Provider] = []

    public struct Provider: Sendable, Equatable {
        public var provider: String
        public var subject: String
        public var email: String?
    }

    /// Why one user was refused: `field` is a JSON pointer into the user's object.
    public struct Problem: Error, Equatable, Sendable {
        public let code: String
        public let field: String?
        public let detail: String

        static func invalid(_ field: String, _ detail: String) -> Problem {
            Problem(code: "import/invalid-user", field: field, detail: detail)
        }
    }

    static let fields: Set<String> = ["uid", "email", "email_verified", "phone", "username", "first_name", "last_name",
                                      "photo_url", "password_hash", "providers", "mfa"]
    static let providerNames: Set<String> = ["apple", "google", "firebase"]

    public init(json: JSONValue) throws(Problem) {
        guard case .object(let object) = json else { throw .invalid("", "must be a JSON object") }
        if let unknown = object.keys.sorted().first(where: { !Self.fields.contains($0) }) {
            throw .invalid("/\(unknown)", "unknown field")
        }
        if object["mfa"] != nil {
            // The MFA work has not landed: a TOTP secret has nowhere to go yet, and dropping it
            // silently would leave an account with less protection than it had.
            throw Problem(code: "import/unsupported", field: "/mfa", detail: "MFA secrets cannot be imported yet")
        }
        func string(_ name: String, maximum: Int = 256) throws(Problem) -> String? {
            switch object[name] {
            case nil, .null?: return nil
            case .string(let value)?:
                guard !value.isEmpty, value.count <= maximum,
                      !value.unicodeScalars.contains(where: { $0.value < 32 || $0.value == 127 }) else {
                    throw .invalid("/\(name)", "must be 1 to \(maximum) characters without control characters")
                }
                return value
            default: throw .invalid("/\(name)", "must be a string")
            }
        }
        uid = try string("uid", maximum: 128)
        if let uid, !uid.utf8.allSatisfy({ Self.isIdentifierByte($0) }) {
            throw .invalid("/uid", "must be letters, digits, '_', '-', '.' or ':'")
        }
        email = try string("email", maximum: 254)
        if let email, !EmailAddress.isValid(email) { throw .invalid("/email", "must be an email address") }
        switch object["email_verified"] {
        case nil, .null?: emailVerified = false
        case .bool(let value)?: emailVerified = value
        default: throw .invalid("/email_verified", "must be a boolean")
        }
        phone = try string("phone", maximum: 16)
        if let phone, !(phone.hasPrefix("+") && (8...16).contains(phone.utf8.count)
                        && phone.utf8.dropFirst().allSatisfy({ $0 >= 48 && $0 <= 57 })) {
            throw .invalid("/phone", "must be E.164 (+ and 7 to 15 digits)")
        }
        username = try string("username", maximum: 32)
        if let username, !((3...32).contains(username.utf8.count) && username.utf8.allSatisfy({
            ($0 >= 48 && $0 <= 57) || ($0 >= 65 && $0 <= 90) || ($0 >= 97 && $0 <= 122) || $0 == 95 || $0 == 46 })) {
            throw .invalid("/username", "must be 3 to 32 letters, digits, '_' or '.'")
        }
        firstName = try string("first_name", maximum: 100)
        lastName = try string("last_name", maximum: 100)
        photoURL = try string("photo_url", maximum: 2048)
        if let photoURL, !(photoURL.hasPrefix("https://") || photoURL.hasPrefix("http://")) {
            throw .invalid("/photo_url", "must be an http(s) URL")
        }
        if let hash = object["password_hash"], hash != .null { passwordHash = try Self.passwordHash(hash) }
        providers = try Self.providers(object["providers"])
        guard email != nil || username != nil || phone != nil || !providers.isEmpty else {
            throw .invalid("", "needs an email, a username, a phone number or a provider identity")
        }
    }

    private static func isIdentifierByte(_ byte: UInt8) -> Bool {
        (byte >= 48 && byte <= 57) || (byte >= 65 && byte <= 90) || (byte >= 97 && byte <= 122)
            || byte == 95 || byte == 45 || byte == 46 || byte == 58
    }

    private static func providers(_ json: JSONValue?) throws(Problem) -> [Provider] {
        guard let json, json != .null else { return [] }
        guard case .array(let items) = json, items.count <= 3 else { throw .invalid("/providers", "must be an array of at most 3") }
        var seen: Set<String> = []
        var out: [Provider] = []
        for (index, item) in items.enumerated() {
            let pointer = "/providers/\(index)"
            guard case .object(let fields) = item, Set(fields.keys).isSubset(of: ["provider", "subject", "email"]),
                  case .string(let provider)? = fields["provider"], providerNames.contains(provider),
                  case .string(let subject)? = fields["subject"], (1...255).contains(subject.utf8.count),
                  !subject.unicodeScalars.contains(where: { $0.value < 32 }) else {
                throw .invalid(pointer, "must be {provider: apple|google|firebase, subject, email?}")
            }
            var email: String?
            switch fields["email"] {
            case nil, .null?: email = nil
            case .string(let value)? where EmailAddress.isValid(value): email = value
            default: throw .invalid(pointer + "/email", "must be an email address")
            }
            guard seen.insert(provider).inserted else { throw .invalid(pointer, "one identity per provider") }
            out.append(Provider(provider: provider, subject: subject, email: email))
        }
        return out
    }

    private static func passwordHash(_ json: JSONValue) throws(Problem) -> ImportedPasswordHash {
        let pointer = "/password_hash"
        guard case .object(let fields) = json, case .string(let algorithm)? = fields["algorithm"] else {
            throw .invalid(pointer, "must be an object with an algorithm")
        }
        func text(_ name: String) throws(Problem) -> String {
            guard case .string(let value)? = fields[name], !value.isEmpty, value.utf8.count <= 512 else {
                throw .invalid("\(pointer)/\(name)", "must be a non-empty string")
            }
            return value
        }
        func bytes(_ name: String, allowEmpty: Bool = false) throws(Problem) -> [UInt8] {
            if allowEmpty, case .string("")? = fields[name] { return [] }
            guard let decoded = ImportedPasswordHash.unb64(try text(name)) else {
                throw .invalid("\(pointer)/\(name)", "must be base64")
            }
            return decoded
        }
        func integer(_ name: String) throws(Problem) -> Int {
            guard case .number(let value)? = fields[name], value == value.rounded(), value >= 0, value < 1e9 else {
                throw .invalid("\(pointer)/\(name)", "must be a non-negative integer")
            }
            return Int(value)
        }
        func only(_ names: Set<String>) throws(Problem) {
            if let extra = fields.keys.sorted().first(where: { !names.contains($0) && $0 != "algorithm" }) {
                throw .invalid("\(pointer)/\(extra)", "unknown field for \(algorithm)")
            }
        }
        let hash: ImportedPasswordHash
        switch algorithm {
        case "bcrypt":
            try only(["hash"])
            hash = .bcrypt(try text("hash"))
        case "argon2id", "argon2i":
            try only(["hash"])
            let phc = try text("hash")
            guard phc.hasPrefix("$\(algorithm)$") else { throw .invalid("\(pointer)/hash", "must be a $\(algorithm)$ PHC string") }
            hash = .argon2(phc)
        case "scrypt":
            try only(["hash", "salt", "n", "r", "p"])
            let n = try integer("n")
            guard n > 1, n & (n - 1) == 0 else { throw .invalid("\(pointer)/n", "must be a power of two") }
            hash = .scrypt(logN: n.trailingZeroBitCount, r: try integer("r"), p: try integer("p"),
                           salt: try bytes("salt"), hash: try bytes("hash"))
        case "firebase_scrypt":
            try only(["hash", "salt", "salt_separator", "signer_key", "rounds", "memory_cost"])
            hash = .firebaseScrypt(memoryCost: try integer("memory_cost"), rounds: try integer("rounds"),
                                   salt: try bytes("salt"), saltSeparator: try bytes("salt_separator", allowEmpty: true),
                                   signerKey: try bytes("signer_key"), hash: try bytes("hash"))
        case "pbkdf2_sha256", "pbkdf2_sha1":
            try only(["hash", "salt", "iterations"])
            hash = .pbkdf2(digest: algorithm == "pbkdf2_sha256" ? .sha256 : .sha1, iterations: try integer("iterations"),
                           salt: try bytes("salt"), hash: try bytes("hash"))
        default:
            throw .invalid("\(pointer)/algorithm",
                           "must be bcrypt, scrypt, firebase_scrypt, pbkdf2_sha256, pbkdf2_sha1, argon2id or argon2i")
        }
        do {
            try hash.validate()
        } catch {
            throw .invalid(pointer, error.reason)
        }
        return hash
    }
}
