import IdentityKit

/// How an MFA backup code is kept (OWASP ASVS 2.6.2): a code carries about 50 bits, short of
/// the 112 that would make it safe as a bare hash, so each code gets its own random salt, stored
/// beside HMAC-SHA-256(backup-code sub-key, salt ‖ code). The salt makes every stored value
/// unique, so a copy of the table cannot be attacked for all users' codes at once; the sub-key
/// (which no database holds) keeps it from being searched offline at all.
///
/// Codes made before salts were kept (`salt` NULL) still verify the old way, an HMAC of the
/// code alone, until they are spent or a new set replaces them.
public struct BackupCodeHash: Sendable, Equatable {
    /// 128 bits: far past ASVS's 32, and the size of the other salts here (Argon2id's).
    public static let saltLength = 16

    /// Nil for a code stored before salts.
    public let salt: [UInt8]?
    public let hmac: [UInt8]

    public init(salt: [UInt8]?, hmac: [UInt8]) {
        self.salt = salt
        self.hmac = hmac
    }

    /// A new code's stored form, under a fresh random salt.
    public static func make(_ code: String, key: [UInt8]) -> BackupCodeHash {
        let salt = SecureRandom.bytes(saltLength)
        return BackupCodeHash(salt: salt, hmac: digest(code, salt: salt, key: key))
    }

    /// Whether `code` is the one this row keeps (constant time in the HMAC's bytes).
    public func matches(_ code: String, key: [UInt8]) -> Bool {
        Digest.constantTimeEqual(Self.digest(code, salt: salt, key: key), hmac)
    }

    /// Case, spaces and dashes do not matter when a backup code is typed back.
    public static func normalized(_ code: String) -> [UInt8] {
        Array(String(code.lowercased().filter { $0 != "-" && $0 != " " }.prefix(64)).utf8)
    }

    /// The salt has one length, so salt ‖ code never reads as another salt and code.
    static func digest(_ code: String, salt: [UInt8]?, key: [UInt8]) -> [UInt8] {
        Digest.hmacSHA256(key: key, (salt ?? []) + normalized(code))
    }
}
