import CArgon2
import CSodium
import CSodiumShim
import Dispatch
import Foundation
import IdentityKit

/// Argon2id stored as PHC strings (`$argon2id$v=19$m=…,t=…,p=…$salt$hash`), computed by
/// libsodium: the same function as libargon2, but with SIMD code chosen at run time (Debian's
/// libargon2 is the portable build, about 0.7× the speed). The cost is configuration: OWASP's
/// m=19 MiB, t=2, p=1 by default, cheaper only in tests. libsodium hashes only with one lane, so
/// a configured parallelism above 1 still hashes through libargon2; every PHC string, whoever
/// made it, verifies through libsodium (it reads m, t and p from the string).
///
/// The token worker's hasher is peppered (OWASP ASVS 2.4.5, `peppered(masterKey:)`): what
/// Argon2id hashes is HMAC-SHA-256(pepper, password), the pepper being a sub-key of the master
/// key that no database holds, so a copy of the users table alone cannot be cracked at all. Such
/// a hash is stored as `$pepper-v1` followed by the PHC string, which tells it from an unpeppered
/// `$argon2id$` (a hash made before the pepper, or an imported Argon2id): those still verify as
/// they are, and a successful sign-in replaces them (`needsRehash`).
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

    /// What a peppered hash's stored form starts with, before its PHC string. Versioned with
    /// the pepper's sub-key label (`SubKey.passwordPepper`): a new pepper would be a new prefix.
    public static let pepperedPrefix = "$pepper-v1"

    public let cost: Cost
    let gate: HashGate?
    /// How long the native checks take here (`StoredPasswordCheck` pads imported ones to it).
    let nativeCheckTime = CheckTiming()
    /// The secret the password goes through before Argon2id; nil for an unpeppered hasher (the
    /// tools' benchmarks, tests). Never logged, never stored.
    let pepper: [UInt8]?
    /// A hash of a random password at this cost: an unknown account is checked against it so
    /// that it costs the same hash work as a wrong password (no timing oracle for emails).
    public let decoyHash: String

    /// `concurrentHashes`: at most that many hashes or checks run at once in this process (the
    /// others wait their turn), imported hashes' checks included; nil for no bound. One slot is
    /// one thread at the default parallelism of 1. The token worker bounds it to its cores: each
    /// Argon2id call fills its own 19 MiB, so more hashes than cores only trade caches and TLBs
    /// between them (on the 2-core bench machine, 4 threads hash 30 % fewer per second than 2),
    /// and the commands behind them wait as long either way. As many working areas as slots (as
    /// cores without a bound) stay mapped between hashes (`withKeptMemory`).
    ///
    /// Resident memory: those areas stay resident, `concurrentHashes` × the memory cost.
    public init(cost: Cost, concurrentHashes: Int? = nil) throws {
        try self.init(cost: cost, gate: concurrentHashes.map(HashGate.init), pepper: nil)
    }

    private init(cost: Cost, gate: HashGate?, pepper: [UInt8]?) throws {
        try Sodium.ready()
        csodiumshim_hash_memory_keep_at_least(Int32(gate?.width ?? ProcessInfo.processInfo.activeProcessorCount))
        self.cost = cost
        self.gate = gate
        self.pepper = pepper
        // The decoy is of the kind this hasher makes, so checking it costs what a real check does.
        let decoy = Base64URL.encode(SecureRandom.bytes(16))
        if let pepper {
            decoyHash = Self.pepperedPrefix + (try Self.hash(Self.peppered(decoy, with: pepper), cost: cost))
        } else {
            decoyHash = try Self.hash(Array(decoy.utf8), cost: cost)
        }
    }

    /// This hasher (same cost, same bound on concurrent hashes) with the pepper derived from the
    /// master key (`SubKey.passwordPepper`): what the token worker, the one process holding the
    /// master key, hashes and checks passwords with.
    public func peppered(masterKey: [UInt8]) throws -> PasswordHasher {
        try PasswordHasher(cost: cost, gate: gate, pepper: SubKey.passwordPepper.derive(from: masterKey))
    }

    public func hash(_ password: String) throws -> String {
        try admitted {
            guard let pepper else { return try Self.hash(Array(password.utf8), cost: cost) }
            return Self.pepperedPrefix + (try Self.hash(Self.peppered(password, with: pepper), cost: cost))
        }
    }

    /// HMAC-SHA-256(pepper, password): a fixed 32 bytes, whatever the password's length.
    static func peppered(_ password: String, with pepper: [UInt8]) -> [UInt8] {
        Digest.hmacSHA256(key: pepper, Array(password.utf8))
    }

    /// Whether a stored hash is the service's own Argon2id, peppered or not (anything else is
    /// an imported hash).
    public static func isNative(_ stored: String) -> Bool {
        stored.hasPrefix("$argon2id$") || stored.hasPrefix(pepperedPrefix + "$argon2id$")
    }

    /// Runs `work` (any password hash or check) within the bound, when there is one.
    func admitted<T>(_ work: () throws -> T) rethrows -> T {
        guard let gate else { return try work() }
        return try gate.run(work)
    }

    private static func hash(_ password: [UInt8], cost: Cost) throws -> String {
        cost.parallelism == 1 ? try sodiumHash(password, cost: cost) : try argon2Hash(password, cost: cost)
    }

    /// libsodium draws its own 16-byte salt and writes a 32-byte hash, as libargon2 did here.
    private static func sodiumHash(_ passwordBytes: [UInt8], cost: Cost) throws -> String {
        var encoded = [CChar](repeating: 0, count: Int(crypto_pwhash_STRBYTES))
        let result = withKeptMemory {
            crypto_pwhash_str_alg(&encoded, passwordBytes, UInt64(passwordBytes.count), UInt64(cost.iterations),
                                  Int(cost.memoryKiB) * 1024, crypto_pwhash_ALG_ARGON2ID13)
        }
        guard result == 0 else {
            throw CryptoError(operation: "crypto_pwhash_str_alg", reason: "out of memory or cost out of range")
        }
        return String(decoding: encoded.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Runs one libsodium hash or check with its working memory taken from the areas kept
    /// mapped (CSodiumShim), not mapped, faulted in and unmapped anew: that was 40 % of a
    /// hashing thread's CPU, in the kernel. Same thread, start to end: the shim's scope is
    /// thread-local.
    static func withKeptMemory<T>(_ call: () -> T) -> T {
        csodiumshim_hash_memory_enter()
        defer { csodiumshim_hash_memory_leave() }
        return call()
    }

    private static func argon2Hash(_ passwordBytes: [UInt8], cost: Cost) throws -> String {
        let salt = SecureRandom.bytes(16)
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

    /// True when `password` matches the stored Argon2id: a PHC string, or a peppered one
    /// (`$pepper-v1$argon2id$…`, only for a hasher holding the pepper). libsodium compares in
    /// constant time. Only Argon2id: libsodium would also take `$argon2i$`, which this service
    /// never made.
    public func verify(_ password: String, against stored: String) -> Bool {
        let phc: String
        let input: [UInt8]
        if stored.hasPrefix(Self.pepperedPrefix + "$argon2id$") {
            guard let pepper else { return false }
            phc = String(stored.dropFirst(Self.pepperedPrefix.count))
            input = Self.peppered(password, with: pepper)
        } else if stored.hasPrefix("$argon2id$") {
            phc = stored
            input = Array(password.utf8)
        } else {
            return false
        }
        return admitted {
            let started = DispatchTime.now().uptimeNanoseconds
            defer { nativeCheckTime.record(DispatchTime.now().uptimeNanoseconds - started) }
            return Self.withKeptMemory { phc.withCString { crypto_pwhash_str_verify($0, input, UInt64(input.count)) } } == 0
        }
    }

    /// Burns the same work as a real check, for accounts that do not exist.
    public func verifyDecoy(_ password: String) {
        _ = verify(password, against: decoyHash)
    }
}

/// The duration of the last few native checks (decoys included), in nanoseconds.
final class CheckTiming: Sendable {
    private static let window = 31
    private let samples = Locked((values: [UInt64](), next: 0))

    func record(_ nanoseconds: UInt64) {
        samples.withLock { state in
            if state.values.count < Self.window {
                state.values.append(nanoseconds)
            } else {
                state.values[state.next] = nanoseconds
            }
            state.next = (state.next + 1) % Self.window
        }
    }

    /// The upper quartile of those, nil until a native check has run: what every check is
    /// padded to. Padding to it rather than to the median makes the median of every kind of
    /// check this very value (three native checks in four already finish under it, and the
    /// others are padded to it), where padding to the median left an imported check, which is
    /// always padded, a few milliseconds under the native checks on a loaded machine.
    var upperQuartile: UInt64? {
        let values = samples.withLock { $0.values }.sorted()
        return values.isEmpty ? nil : values[values.count * 3 / 4]
    }
}

/// A counting semaphore around the hash work (`PasswordHasher.init(concurrentHashes:)`).
final class HashGate: Sendable {
    private let slots: DispatchSemaphore
    private let running = Locked((now: 0, most: 0))
    /// How many run at once at most.
    let width: Int

    init(_ width: Int) {
        self.width = max(1, width)
        slots = DispatchSemaphore(value: self.width)
    }

    /// The most hashes that ran at once so far (the unit test's evidence).
    var mostAtOnce: Int { running.withLock { $0.most } }

    func run<T>(_ work: () throws -> T) rethrows -> T {
        slots.wait()
        running.withLock { $0.now += 1; $0.most = max($0.most, $0.now) }
        defer {
            running.withLock { $0.now -= 1 }
            slots.signal()
        }
        return try work()
    }
}

/// libsodium's one-time initialisation (picks the SIMD implementations); thread-safe, idempotent.
enum Sodium {
    private static let initialised: Bool = sodium_init() >= 0

    static func ready() throws {
        guard initialised else { throw CryptoError(operation: "sodium_init", reason: "libsodium failed to start") }
    }
}
