import CArgon2
import IdentityKit

/// Argon2i PHC strings from other systems (imported hashes). The service's own hashes are
/// Argon2id and are checked by `PasswordHasher`; this only covers the `i` variant.
public enum Argon2iVerifier {
    /// True when `password` matches (libargon2 compares in constant time).
    public static func verify(_ password: [UInt8], against phc: String) -> Bool {
        phc.withCString { argon2i_verify($0, password, password.count) } == ARGON2_OK.rawValue
    }
}
