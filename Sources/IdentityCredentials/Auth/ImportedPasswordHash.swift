import Foundation
import IdentityKit

/// A password hash made by another system, kept as given until the user's next successful
/// password sign-in replaces it with the service's Argon2id (`PasswordSignIn`). Stored in
/// `users.password_hash` as a self-describing string (PHC style where one exists), so the one
/// column keeps meaning "the password check": `storedForm` writes it and `init(stored:)` reads it.
///
/// Parameters are bounded at import: a hash whose check would take more than about a second
/// or 64 MiB (128 MiB for Argon2) is refused there, so an import cannot make sign-ins exhaust a
/// worker.
public enum ImportedPasswordHash: Equatable, Sendable {
    /// `$2a$`, `$2b$` or `$2y$` with its cost and salt (libxcrypt).
    case bcrypt(String)
    /// An Argon2i or Argon2id PHC string (`$argon2i$v=19$m=…,t=…,p=…$salt$hash`).
    case argon2(String)
    /// RFC 7914 scrypt: N = 2^logN.
    case scrypt(logN: Int, r: Int, p: Int, salt: [UInt8], hash: [UInt8])
    /// Firebase Auth's modified scrypt: the derived key (scrypt of the password with the salt
    /// followed by the project's salt separator, N = 2^memoryCost, r = rounds, p = 1) encrypts
    /// the project's signer key with AES-256-CTR; the result is the stored hash.
    case firebaseScrypt(memoryCost: Int, rounds: Int, salt: [UInt8], saltSeparator: [UInt8], signerKey: [UInt8], hash: [UInt8])
    /// PBKDF2 with HMAC-SHA-256 or HMAC-SHA-1.
    case pbkdf2(digest: KeyDerivation.PBKDF2Digest, iterations: Int, salt: [UInt8], hash: [UInt8])

    // MARK: Bounds

    static let bcryptCosts = 4...14
    static let pbkdf2Iterations = 1...2_000_000
    static let byteLengths = 1...128
    static let argon2MemoryKiB = 8...131_072
    static let argon2Iterations = 1...16
    static let argon2Parallelism = 1...8

    // MARK: Floor

    /// Why the hash is below the floor a hash of today should meet (OWASP's password storage
    /// minimums, rounded down to what real systems still ship), or nil. A weak hash is what an
    /// attacker with a copy of the old system's table cracks first; it is imported only when
    /// the caller says so (`allow_weak_hashes`) and counted in the report, and it is replaced by
    /// our Argon2id at the user's next sign-in either way.
    public var weakness: String? {
        switch self {
        case .bcrypt(let hash):
            guard let cost = Bcrypt.cost(of: hash), cost < 10 else { return nil }
            return "bcrypt cost \(cost) is below 10"
        case .argon2(let phc):
            let parameters = Self.argon2Parameters(phc)
            guard let m = parameters["m"], let t = parameters["t"], m < 7168 || m * t < 35_840 else { return nil }
            return "Argon2 m=\(m) KiB, t=\(t) is below m ≥ 7168 KiB and m·t ≥ 35840"
        case .scrypt(let logN, let r, _, _, _):
            guard logN < 14 || r < 8 else { return nil }
            return "scrypt N=2^\(logN), r=\(r) is below N=2^14, r=8"
        case .firebaseScrypt(let memoryCost, let rounds, _, _, _, _):
            guard memoryCost < 13 || rounds < 8 else { return nil }
            return "Firebase scrypt memory_cost \(memoryCost), rounds \(rounds) is below 13 and 8"
        case .pbkdf2(let digest, let iterations, _, _):
            guard iterations < 100_000 else { return nil }
            return "PBKDF2-\(digest.rawValue.uppercased()) with \(iterations) iterations is below 100000"
        }
    }

    /// `m`, `t` and `p` of an Argon2 PHC string (already validated).
    static func argon2Parameters(_ phc: String) -> [String: Int] {
        let fields = phc.split(separator: "$", omittingEmptySubsequences: false)
        guard fields.count == 5 || fields.count == 6 else { return [:] }
        var values: [String: Int] = [:]
        for pair in (fields.count == 6 ? fields[3] : fields[2]).split(separator: ",") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            if parts.count == 2, let value = Int(parts[1]) { values[String(parts[0])] = value }
        }
        return values
    }

    /// Why an import refused a hash (its detail goes back to the caller per user).
    public struct Invalid: Error, Equatable, Sendable {
        public let reason: String
    }

    // MARK: Stored form

    public var storedForm: String {
        switch self {
        case .bcrypt(let hash), .argon2(let hash):
            return hash
        case .scrypt(let logN, let r, let p, let salt, let hash):
            return "$scrypt$ln=\(logN),r=\(r),p=\(p)$\(Self.b64(salt))$\(Self.b64(hash))"
        case .firebaseScrypt(let memoryCost, let rounds, let salt, let separator, let signerKey, let hash):
            return "$firebase-scrypt$mem=\(memoryCost),rounds=\(rounds)$\(Self.b64(salt))$\(Self.b64(separator))"
                + "$\(Self.b64(signerKey))$\(Self.b64(hash))"
        case .pbkdf2(let digest, let iterations, let salt, let hash):
            return "$pbkdf2-\(digest.rawValue)$i=\(iterations)$\(Self.b64(salt))$\(Self.b64(hash))"
        }
    }

    /// Reads a stored form; nil for the service's own hashes and anything unknown.
    public init?(stored: String) {
        let fields = stored.split(separator: "$", omittingEmptySubsequences: false).map(String.init)
        guard fields.count >= 2, fields[0].isEmpty else { return nil }
        func parameters(_ text: String) -> [String: Int] {
            var out: [String: Int] = [:]
            for pair in text.split(separator: ",") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                if parts.count == 2, let value = Int(parts[1]) { out[String(parts[0])] = value }
            }
            return out
        }
        switch fields[1] {
        case "2a", "2b", "2y":
            guard Bcrypt.cost(of: stored) != nil else { return nil }
            self = .bcrypt(stored)
        case "argon2i", "argon2id":
            self = .argon2(stored)
        case "scrypt":
            let values = parameters(fields.count == 5 ? fields[2] : "")
            guard fields.count == 5, let logN = values["ln"], let r = values["r"], let p = values["p"],
                  let salt = Self.unb64(fields[3]), let hash = Self.unb64(fields[4]) else { return nil }
            self = .scrypt(logN: logN, r: r, p: p, salt: salt, hash: hash)
        case "firebase-scrypt":
            let values = parameters(fields.count == 7 ? fields[2] : "")
            guard fields.count == 7, let memoryCost = values["mem"], let rounds = values["rounds"],
                  let salt = Self.unb64(fields[3]), let separator = Self.unb64(fields[4]),
                  let signerKey = Self.unb64(fields[5]), let hash = Self.unb64(fields[6]) else { return nil }
            self = .firebaseScrypt(memoryCost: memoryCost, rounds: rounds, salt: salt, saltSeparator: separator,
                                   signerKey: signerKey, hash: hash)
        case "pbkdf2-sha256", "pbkdf2-sha1":
            let values = parameters(fields.count == 5 ? fields[2] : "")
            guard fields.count == 5, let iterations = values["i"],
                  let salt = Self.unb64(fields[3]), let hash = Self.unb64(fields[4]) else { return nil }
            self = .pbkdf2(digest: fields[1] == "pbkdf2-sha256" ? .sha256 : .sha1, iterations: iterations,
                           salt: salt, hash: hash)
        default:
            return nil
        }
    }

    // MARK: Verification

    /// True when `password` matches; every comparison of derived bytes is constant-time.
    /// Parameters out of bounds (a row written by hand) fail rather than run.
    public func verify(_ password: String) -> Bool {
        let bytes = Array(password.utf8)
        guard (try? validate()) != nil else { return false }
        switch self {
        case .bcrypt(let stored):
            guard let computed = Bcrypt.hash(bytes, setting: stored) else { return false }
            return Digest.constantTimeEqual(Array(computed.utf8), Array(stored.utf8))
        case .argon2(let phc):
            // Argon2id goes through the service's hasher (its public API); Argon2i through libargon2.
            return phc.hasPrefix("$argon2id$") ? Self.argon2idCheck?.verify(password, against: phc) == true
                                                : Argon2iVerifier.verify(bytes, against: phc)
        case .scrypt(let logN, let r, let p, let salt, let hash):
            guard let derived = try? KeyDerivation.scrypt(password: bytes, salt: salt, n: 1 << UInt64(logN),
                                                          r: UInt64(r), p: UInt64(p), length: hash.count) else { return false }
            return Digest.constantTimeEqual(derived, hash)
        case .firebaseScrypt(let memoryCost, let rounds, let salt, let separator, let signerKey, let hash):
            guard let derived = try? KeyDerivation.scrypt(password: bytes, salt: salt + separator,
                                                          n: 1 << UInt64(memoryCost), r: UInt64(rounds), p: 1, length: 64),
                  let computed = try? KeyDerivation.aes256CTR(key: Array(derived.prefix(32)), signerKey) else { return false }
            return Digest.constantTimeEqual(computed, hash)
        case .pbkdf2(let digest, let iterations, let salt, let hash):
            guard let derived = try? KeyDerivation.pbkdf2(password: bytes, salt: salt, iterations: Int32(iterations),
                                                          digest: digest, length: hash.count) else { return false }
            return Digest.constantTimeEqual(derived, hash)
        }
    }

    /// Argon2id verification needs no cost: `PasswordHasher.verify` reads it from the PHC string.
    private static let argon2idCheck: PasswordHasher? = try? PasswordHasher(cost: .init(memoryKiB: 8, iterations: 1, parallelism: 1))

    /// Throws `Invalid` when a parameter is out of the bounds above.
    public func validate() throws(Invalid) {
        func check(_ condition: Bool, _ reason: String) throws(Invalid) {
            if !condition { throw Invalid(reason: reason) }
        }
        switch self {
        case .bcrypt(let hash):
            guard let cost = Bcrypt.cost(of: hash) else { throw Invalid(reason: "not a bcrypt hash ($2a$, $2b$ or $2y$, 60 characters)") }
            try check(Self.bcryptCosts.contains(cost), "bcrypt cost must be 4 to 14")
        case .argon2(let phc):
            try Self.validateArgon2(phc)
        case .scrypt(let logN, let r, let p, let salt, let hash):
            try check((1...20).contains(logN) && (1...32).contains(r) && (1...16).contains(p), "scrypt parameters out of range")
            try check(UInt64(128 * r) << UInt64(logN) <= KeyDerivation.scryptMaximumMemory, "scrypt would need more than 64 MiB")
            try check((UInt64(r * p) << UInt64(logN)) <= 1 << 22, "scrypt would take too long (N·r·p above 2^22)")
            try check(Self.byteLengths.contains(salt.count) && (16...128).contains(hash.count), "scrypt salt or hash length out of range")
        case .firebaseScrypt(let memoryCost, let rounds, let salt, let separator, let signerKey, let hash):
            try check((1...15).contains(memoryCost) && (1...16).contains(rounds), "memory_cost must be 1 to 15 and rounds 1 to 16")
            try check(Self.byteLengths.contains(salt.count) && separator.count <= 16, "salt or salt separator length out of range")
            try check(Self.byteLengths.contains(signerKey.count) && hash.count == signerKey.count,
                      "the hash must be as long as the signer key")
        case .pbkdf2(_, let iterations, let salt, let hash):
            try check(Self.pbkdf2Iterations.contains(iterations), "iterations must be 1 to 2000000")
            try check(Self.byteLengths.contains(salt.count) && (16...128).contains(hash.count), "salt or hash length out of range")
        }
    }

    private static func validateArgon2(_ phc: String) throws(Invalid) {
        // $argon2i(d)$v=19$m=…,t=…,p=…$salt$hash (v= may be missing in version-16 hashes).
        let fields = phc.split(separator: "$", omittingEmptySubsequences: false)
        guard fields.count == 5 || fields.count == 6, fields[0].isEmpty,
              fields[1] == "argon2i" || fields[1] == "argon2id" else {
            throw Invalid(reason: "not an Argon2i or Argon2id PHC string")
        }
        let parameterField = fields.count == 6 ? fields[3] : fields[2]
        if fields.count == 6 { guard fields[2] == "v=19" || fields[2] == "v=16" else { throw Invalid(reason: "unknown Argon2 version") } }
        var values: [Substring: Int] = [:]
        for pair in parameterField.split(separator: ",") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            guard parts.count == 2, let value = Int(parts[1]) else { throw Invalid(reason: "bad Argon2 parameters") }
            values[parts[0]] = value
        }
        // m·t bounds the work (about a second here at 1 GiB of passes), m alone the memory.
        guard let m = values["m"], let t = values["t"], let p = values["p"], values.count == 3,
              argon2MemoryKiB.contains(m), argon2Iterations.contains(t), argon2Parallelism.contains(p),
              m * t <= 1 << 20 else {
            throw Invalid(reason: "Argon2 parameters out of range (m ≤ 131072 KiB, t ≤ 16, m·t ≤ 1048576, p ≤ 8)")
        }
        let salt = fields[fields.count - 2], hash = fields[fields.count - 1]
        guard unb64(String(salt)).map({ byteLengths.contains($0.count) }) == true,
              unb64(String(hash)).map({ (4...128).contains($0.count) }) == true else {
            throw Invalid(reason: "bad Argon2 salt or hash")
        }
    }

    // MARK: Base64 (standard alphabet, padding optional on input, none on output)

    static func b64(_ bytes: [UInt8]) -> String {
        var text = Data(bytes).base64EncodedString()
        while text.hasSuffix("=") { text.removeLast() }
        return text
    }

    static func unb64(_ text: String) -> [UInt8]? {
        var padded = text
        while padded.hasSuffix("=") { padded.removeLast() }
        guard padded.utf8.count % 4 != 1 else { return nil }
        padded += String(repeating: "=", count: (4 - padded.utf8.count % 4) % 4)
        return Data(base64Encoded: padded).map(Array.init)
    }
}
