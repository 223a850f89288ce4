import Foundation
import IdentityKit

/// The password check for whatever `users.password_hash` holds: the service's Argon2id, peppered
/// or not (through `PasswordHasher`'s public API), or a hash imported from another system
/// (`ImportedPasswordHash`).
extension PasswordHasher {
    public func verifyStored(_ password: String, against stored: String) -> Bool {
        let started = DispatchTime.now().uptimeNanoseconds
        defer { padToNativeCheck(startedAt: started) }
        if Self.isNative(stored) { return verify(password, against: stored) }
        guard let imported = ImportedPasswordHash(stored: stored) else {
            verifyDecoy(password)  // an unreadable hash costs what a wrong password does
            return false
        }
        // bcrypt, scrypt or PBKDF2 at their own cost: bounded like the service's own hashes.
        return admitted { imported.verify(password) }
    }

    /// The check for an account that does not exist (or has no password): a decoy Argon2id
    /// check, padded like every stored check, so its time says nothing either.
    public func verifyDecoyPadded(_ password: String) {
        let started = DispatchTime.now().uptimeNanoseconds
        verifyDecoy(password)
        padToNativeCheck(startedAt: started)
    }

    /// An imported hash is usually far cheaper than our Argon2id (a legacy bcrypt at cost 4 or
    /// PBKDF2 with few iterations checks in a millisecond), and a sign-in that answers in 5 ms
    /// where others take 35 tells an attacker which accounts were imported (and so which hashes
    /// are weak). So every check (native, imported, decoy) lasts at least the upper quartile of the
    /// recent native checks here: the rest is slept (the CPU is not spent, only the answer
    /// waits), which also evens out the fast three quarters of the native checks themselves; before any native check has
    /// run, a decoy check gives both the time and the first sample. A legacy hash dearer than
    /// ours is not made faster; import refuses the very dear ones.
    private func padToNativeCheck(startedAt started: UInt64) {
        guard let typical = nativeCheckTime.upperQuartile else {
            verifyDecoy("")
            return padToNativeCheck(startedAt: started)
        }
        let elapsed = DispatchTime.now().uptimeNanoseconds - started
        guard elapsed < typical else { return }
        let left = typical - elapsed
        var pause = timespec(tv_sec: Int(left / 1_000_000_000), tv_nsec: Int(left % 1_000_000_000))
        var rest = timespec()
        while nanosleep(&pause, &rest) != 0, errno == EINTR { pause = rest }
    }

    /// True when a stored hash is not the service's own Argon2id at this hasher's cost and
    /// pepper (an imported hash, another cost, or an unpeppered hash for a peppered hasher):
    /// after a successful check the caller replaces it with `hash(password)` in the same
    /// transaction (`PasswordSignIn`).
    public func needsRehash(_ stored: String) -> Bool {
        let own = (pepper == nil ? "" : Self.pepperedPrefix)
            + "$argon2id$v=19$m=\(cost.memoryKiB),t=\(cost.iterations),p=\(cost.parallelism)$"
        return !stored.hasPrefix(own)
    }
}
