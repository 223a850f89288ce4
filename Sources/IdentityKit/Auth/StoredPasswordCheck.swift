/// The password check for whatever `users.password_hash` holds: the service's Argon2id (through
/// `PasswordHasher`'s public API) or a hash imported from another system (`ImportedPasswordHash`).
extension PasswordHasher {
    public func verifyStored(_ password: String, against stored: String) -> Bool {
        if stored.hasPrefix("$argon2id$") { return verify(password, against: stored) }
        guard let imported = ImportedPasswordHash(stored: stored) else { return false }
        // bcrypt, scrypt or PBKDF2 at their own cost: bounded like the service's own hashes.
        return admitted { imported.verify(password) }
    }

    /// True when a stored hash is not the service's own Argon2id at this hasher's cost: after a
    /// successful check the caller replaces it with `hash(password)` in the same transaction.
    public func needsRehash(_ stored: String) -> Bool {
        !stored.hasPrefix("$argon2id$v=19$m=\(cost.memoryKiB),t=\(cost.iterations),p=\(cost.parallelism)$")
    }
}
