import CArgon2

/// Argon2id through libargon2, stored as PHC strings (`$argon2id$v=19$m=…,t=…,p=…$salt$hash`).
/// The cost is configuration: OWASP's m=19 MiB, t=2, p=1 by default, cheaper only in tests.
public struct PasswordHasher: Sendable {
    public struct Cost: Sendable, Equatable {
        public var memoryKiB: UInt32
        public var iterations: UInt32
        public var parallelism: UInt32
        public init(memoryKiB: UInt32, iterations: UInt32, parallelism: UInt32) {
            self.memoryKiB = memoryKiB
            self.iterations = iterations
            self.parallelism = parallelism
        }
        public static let owasp = Cost(memoryKiB: 19_456, iterations: 2, parallelism: 1)
    }

    public let cost: Cost
    /// A hash of a random password at this cost: an unknown account is checked against it so
    /// that it costs the same hash work as a wrong password (no timing oracle for emails).
    public let decoyHash: String

    public init(cost: Cost) throws {
        self.cost = cost
        decoyHash = try Self.hash(Base64URL.encode(SecureRandom.bytes(16)), cost: cost)
    }

    public func hash(_ password: String) throws -> String { try Self.hash(password, cost: cost) }

    private static func hash(_ password: String, cost: Cost) throws -> String {
        let salt = SecureRandom.bytes(16)
        let passwordBytes = Array(password.utf8)
        let length = argon2_encodedlen(cost.iterations, cost.memoryKiB, cost.parallelism,
                                       UInt32(salt.count), 32, Argon2_id)
        var encoded = [CChar](repeating: 0, count: length)
        let result = argon2id_hash_encoded(cost.iterations, cost.memoryKiB, cost.parallelism,
                                           passwordBytes, passwordBytes.count, salt, salt.count,
                                           32, &encoded, length)
        guard result == ARGON2_OK.rawValue else {
            throw CryptoError(operation: "argon2id_hash_encoded",
                              reason: String(cString: argon2_error_message(result)))
        }
        return String(decoding: encoded.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// True when `password` matches the PHC string (libargon2 compares in constant time).
    public func verify(_ password: String, against phc: String) -> Bool {
        let passwordBytes = Array(password.utf8)
        return phc.withCString { argon2id_verify($0, passwordBytes, passwordBytes.count) } == ARGON2_OK.rawValue
    }

    /// Burns the same work as a real check, for accounts that do not exist.
    public func verifyDecoy(_ password: String) {
        _ = verify(password, against: decoyHash)
    }
}
